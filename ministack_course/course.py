"""What the seed says about each hop, each lane and each recovery path.

The journey page's "Next step" mode (:mod:`ministack_course.web`, the
script ``static/steps.js``) walks a real trace one hop at a time, as the
seed's "The full journey, animated" walks its packet; for every hop it
shows what the seed teaches about that step. This module is that
teaching, in the page's own words and faithful to the seed: the attach's
three-call handshake (attachment_create reserves, attachment_update
connects and returns connection_info, attachment_complete marks the
volume in-use), the RPC CALL and CAST between nova-api and the compute
host, os-brick and libvirt on the host, the detach's unwinding and the
four recovery paths of "When it goes wrong".

:func:`step_of` names a hop in the seed's vocabulary (the *step*:
``attachment_update``, ``reserve_block_device_name``, ``bdm.save``...),
from its kind and name alone (a real trace's names: hops.py);
:func:`says` is the seed's explanation of that step in the trace's
journey (attach or detach; a step the seed has no word for gets its
kind's); :data:`ROLES` is the one-paragraph role of each lane, the
seed's "cast of characters"; :data:`RECOVERY_PATHS` the four ways the
seed draws an attach or a detach going wrong. :mod:`ministack_course.state`
derives what each step left behind (the volume, the attachment,
connection_info, the BDM) and which hops are the recovery.
"""

import re

_ACTION = re.compile(r" \(([^()]*)\)$")
_SET_CLAUSE = re.compile(r"\bSET\b(.*?)(\bWHERE\b|$)", re.I | re.S)

#: Cinder actions by the step the seed calls them.
_ACTIONS = {"os-complete": "attachment_complete",
            "os-begin_detaching": "begin_detaching",
            "os-roll_detaching": "roll_detaching",
            "os-reserve": "reserve_volume",
            "os-initialize_connection": "initialize_connection",
            "os-attach": "attach (legacy)",
            "os-terminate_connection": "terminate_connection",
            "os-detach": "detach (legacy)",
            "os-unreserve": "unreserve_volume"}

_UNEXPORT = ("cinder-volume's target driver takes this host's initiator "
             "off the volume's iSCSI target, and removes the export when "
             "nothing else uses it.")

# step -> (what the seed says in an attach, in a detach: None = the same)
_SAYS = {
    "attach request": (
        "You asked nova-api to attach the volume (openstack server add "
        "volume). All of the reserve phase runs in nova-api before it "
        "answers you: it validates the volume, has the compute host "
        "reserve a device name and reserves the volume in Cinder. Nothing "
        "is wired into the guest yet.", None),
    "detach request": (
        "You asked nova-api to detach the volume (openstack server remove "
        "volume). It marks the volume detaching in Cinder, finds this "
        "server's attachment_id among the volume's attachments and casts "
        "the rest to the compute host.", None),
    "volume get": (
        "nova-api fetches the volume from Cinder to validate it (its "
        "availability zone, whether it is multiattach) before anything is "
        "reserved.",
        "nova-api reads the volume from Cinder: its attachments name the "
        "attachment_id this server holds, which the cast carries to the "
        "host."),
    "reserve_block_device_name": (
        "An RPC CALL: nova-api waits for the compute host's answer. The "
        "host knows which device names this instance already uses, so it "
        "picks the free /dev/vdX and creates the block device mapping "
        "(BDM); two attaches at once cannot both claim /dev/vdb.", None),
    "reserve_block_device_name (host)": (
        "The compute host handles the CALL: it chooses the device name, "
        "creates the BDM row (no connection_info yet) and replies to "
        "nova-api.", None),
    "attachment_create": (
        "attachment_create, with no connector (Cinder microversion 3.44): "
        "Cinder reserves the volume, available -> reserved, and returns "
        "the attachment_id that threads the whole handshake. Reserved, not "
        "connected.", None),
    "attach_volume": (
        "An RPC CAST, fire-and-forget: nova-api records the attach_volume "
        "action, puts the message on the instance's host's queue and "
        "answers you at once. The real attach happens on the host, "
        "asynchronously.", None),
    "attach_volume (host)": (
        "nova-compute picks up the cast and, under a per-instance lock, "
        "hands the BDM to DriverVolumeBlockDevice: the host connector, "
        "attachment_update, the driver attach, save, attachment_complete. "
        "If any of it fails, the BDM is destroyed.", None),
    "detach_volume": (
        "An RPC CAST with the volume_id and the attachment_id: "
        "fire-and-forget, nova-api has answered 202 and the host does the "
        "rest.", None),
    "detach_volume (host)": (
        "The compute manager reloads the BDM and calls its detach with the "
        "attachment_id: the driver detach first (unplug, then disconnect), "
        "then attachment_delete, and the BDM is destroyed last.", None),
    "get_connector_properties": (
        "os-brick collects this host's initiator details (IQN, IP, "
        "multipath, hostname): the connector attachment_update sends, so "
        "Cinder exports the volume to exactly this machine.",
        "os-brick gives this host's connector again: the disconnect and "
        "Cinder's clean-up are for this machine's initiator."),
    "attachment_update": (
        "attachment_update sends the host connector and the mountpoint. "
        "Cinder maps/exports the volume to this host and returns "
        "connection_info: the only call of the handshake that returns it. "
        "Nova stamps the volume id into it as the serial.", None),
    "export": (
        "cinder-volume's target driver at work (this lab's backend: LVM "
        "and tgt): what \"Cinder maps/exports the volume\" means here, the "
        "logical volume exported as an iSCSI target that lets this host's "
        "initiator in.", _UNEXPORT),
    "unexport": (_UNEXPORT, None),
    "connect_volume": (
        "The local connect on the compute host (os-brick's connect_volume "
        "in the seed). This lab's initiator is QEMU's own libiscsi, so no "
        "session is made here: QEMU logs in when libvirt attaches the "
        "network disk.", None),
    "secret": (
        "libvirt keeps the CHAP credentials of the disk as a secret (its "
        "value never reaches this page).", None),
    "virDomainAttachDeviceFlags": (
        "libvirt builds the disk's XML and hot-plugs it into the running "
        "guest and into its saved definition (attach_device with "
        "persistent=True, live=True): the guest sees a new block device, no "
        "reboot.", None),
    "guest sees the disk": (
        "The guest sees the new disk at the chosen device name.", None),
    "bdm.create": (
        "The BDM row is written: the device name is taken, no "
        "connection_info yet.", None),
    "bdm.save": (
        "bdm.save(): connection_info is written to the BDM before the "
        "volume is marked in-use, because a detach (or the rollback of a "
        "failed attachment_complete) needs it.", None),
    "attachment_complete": (
        "attachment_complete: the disk is attached and connection_info is "
        "saved, so Cinder marks the attachment attached and the volume "
        "in-use.", None),
    "begin_detaching": (
        "begin_detaching: Cinder moves the volume in-use -> detaching.",
        None),
    "virDomainDetachDeviceFlags": (
        "libvirt unplugs the disk: in the rollback of a failed attach, "
        "virt_driver.detach_volume takes out a disk the failed attach left "
        "in the guest.",
        "driver_detach: with the BDM's stored connection_info and "
        "mountpoint, libvirt unplugs the disk from the live guest (retried "
        "while it waits for the device-removed event), then from the saved "
        "definition."),
    "guest releases": (
        "The guest lets go of the disk: libvirt's device-removed event "
        "arrives. A guest that does not, within the retries, makes the "
        "detach fail (DeviceDetachFailed).", None),
    "disconnect_volume": (
        "The host side of the connection is torn down (os-brick's "
        "disconnect_volume in the seed; this lab's QEMU session ends with "
        "the disk), here as the failed driver attach cleans up after "
        "itself.",
        "_disconnect_volume tears the host side of the connection down "
        "(os-brick in the seed; this lab's QEMU libiscsi session ends with "
        "the disk), never a connection another instance still needs."),
    "secret undefined": (
        "The CHAP secret libvirt held for this disk is removed.", None),
    "attachment_delete": (
        "attachment_delete, the rollback: the attachment is deleted so "
        "Cinder returns the volume to available. It is never left stuck "
        "in reserved or attaching.",
        "The new-style detach ends by deleting the Cinder attachment, "
        "which frees the volume (in-use -> available): no separate "
        "terminate_connection. A missing attachment is logged and "
        "ignored, the goal is reached anyway."),
    "bdm.destroy": (
        "bdm.destroy(): the BDM of the failed attach is removed, so no "
        "orphan record is left.",
        "bdm.destroy(): the BDM goes last, so a detach that fails before "
        "it can simply be retried."),
    "roll_detaching": (
        "roll_detaching: a guest that will not release the disk makes "
        "driver_detach put the volume back detaching -> in-use and "
        "re-raise. The BDM stays, so you can try again.", None),
    "reserve_volume": (
        "The legacy flow's reserve_volume (a BDM without attachment_id): "
        "the volume is reserved for the attach.", None),
    "initialize_connection": (
        "The legacy flow's initialize_connection: the connector goes to "
        "Cinder, connection_info comes back (attachment_update's job in "
        "the new flow).", None),
    "attach (legacy)": (
        "The legacy flow's os-attach marks the volume in-use "
        "(attachment_complete's job in the new flow).", None),
    "terminate_connection": (
        "The legacy flow's terminate_connection: Cinder removes the "
        "host's export.", None),
    "detach (legacy)": (
        "The legacy flow's os-detach: the volume is released.", None),
    "unreserve_volume": (
        "The legacy flow's unreserve: a reservation is undone.", None),
}

#: What the seed says of a step it has no word for, by the hop's kind.
KIND_SAYS = {
    "REST": "A REST request: plain HTTP, as everything to or from Cinder "
            "is.",
    "CALL": "An RPC CALL through the broker: the caller waits for the "
            "reply.",
    "CAST": "An RPC CAST through the broker: fire-and-forget, nobody "
            "waits.",
    "LIBRARY": "A local LIBRARY call on the compute host (os-brick, "
               "libvirt): no message leaves the machine.",
    "COMMAND": "A command the service runs on its host (the volume "
               "backend's tools).",
    "DB": "An SQL statement of the service's database.",
}

#: The seed's cast of characters: each lane's role, one paragraph.
ROLES = {
    "user": "You, with the openstack CLI (or tools/journey.py): one "
            "command, server add volume or server remove volume, sent to "
            "nova-api's REST API. Everything after it is the services' "
            "handshake.",
    "nova-api": "Nova's REST API. For an attach it validates the request, "
                "has the compute host reserve a device name (a CALL), "
                "reserves the volume in Cinder (attachment_create) and "
                "casts attach_volume to the instance's host; for a detach "
                "it calls begin_detaching and casts detach_volume. It "
                "answers you before the host has done the work.",
    "rabbitmq": "The message broker between Nova's services. A CALL waits "
                "on it for the reply (reserve_block_device_name); a CAST "
                "is fire-and-forget (attach_volume, detach_volume). It "
                "carries the messages and does none of the work.",
    "nova-compute": "The compute service on the instance's host. It "
                    "creates the BDM with a free device name, then "
                    "attaches under a per-instance lock: the host "
                    "connector, attachment_update for connection_info, "
                    "the driver attach, bdm.save, attachment_complete; "
                    "and it unwinds all of it on a detach or a failure.",
    "cinder": "The block storage service, reached by REST only. It owns "
              "the volume's status and its attachments: attachment_create "
              "reserves, attachment_update exports the volume to the host "
              "and returns connection_info, attachment_complete marks it "
              "in-use, attachment_delete frees it. cinder-volume's "
              "commands (tgtadm here) do the export.",
    "os-brick": "The storage library on the compute host: it builds the "
                "host's connector (initiator IQN, IP, multipath, hostname) "
                "and connects or disconnects the volume locally. A LIBRARY "
                "call: no message leaves the host.",
    "libvirt": "The hypervisor layer on the compute host. libvirt builds "
               "the disk's XML and hot-plugs it into the running guest and "
               "its saved definition, unplugs it with retries on a detach "
               "and keeps the CHAP secret; QEMU does the disk's I/O (and, "
               "in this lab, the iSCSI login).",
    "guest": "The virtual machine itself. It sees a new block device at "
             "the chosen name, without a reboot; on a detach it must "
             "release the disk, and a guest that refuses makes the detach "
             "fail and roll back.",
}

#: The seed's "When it goes wrong": key -> (title, what happens).
RECOVERY_PATHS = {
    "driver-attach": (
        "Driver attach fails after Cinder mapped the volume",
        "virt_driver.attach_volume() raised after Cinder had exported the "
        "volume: _volume_attach() cleans up the driver's side, calls "
        "attachment_delete to return the volume to available, and "
        "re-raises; the manager destroys the BDM. The volume is never left "
        "in reserved or attaching."),
    "complete-fails": (
        "attachment_complete fails",
        "connection_info is already saved on the BDM, so the driver "
        "detaches the device and attachment_delete rolls the volume back "
        "to available: exactly why bdm.save() runs before "
        "attachment_complete."),
    "rpc-timeout": (
        "RPC MessagingTimeout during BDM creation",
        "The compute host did not answer reserve_block_device_name in "
        "time; the API's exception handler calls volume_bdm.destroy(), so "
        "no stray BDM or unowned reservation is left."),
    "guest-refuses": (
        "Guest refuses to release the disk on detach",
        "DeviceDetachFailed (the retries of _detach_with_retry ran out): "
        "driver_detach() calls roll_detaching to put the volume back to "
        "in-use and re-raises, leaving the BDM so you can try again. Nova "
        "would rather fail loudly than leave a half-detached disk."),
    "host-attach": (
        "The attach fails on the host",
        "Every step on the host has its undo next to it: the attachment "
        "nova-api created is deleted, so the volume is attachable again, "
        "and the manager destroys the BDM."),
    "api-attach": (
        "The attach fails in nova-api, before the cast",
        "If anything before the cast fails, _attach_volume() destroys the "
        "BDM, so no orphan record is left."),
}


def _rest(name):
    """(method, path, action) of a REST hop's name."""
    match = _ACTION.search(name)
    action = match.group(1) if match else None
    if match:
        name = name[:match.start()]
    method, _, path = name.partition(" ")
    return method, path, action


def _db_step(hop):
    text = (hop.get("details") or {}).get("statement") or hop["name"]
    if "block_device_mapping" not in text:
        return None
    verb = text.split(None, 1)[0].upper() if text.split() else ""
    if verb == "INSERT":
        return "bdm.create"
    if verb == "DELETE":
        return "bdm.destroy"
    if verb == "UPDATE":
        match = _SET_CLAUSE.search(text)
        assigned = match.group(1) if match else text
        if "connection_info" in assigned:
            return "bdm.save"
        if "deleted" in assigned:
            return "bdm.destroy"
    return None


#: The LIBRARY hops the seed names: (text in the hop's name, the seed's
#: step), first match wins; the one place the course reads library hop
#: names ("connect_volume (QEMU libiscsi)" or "(os-brick iSCSI)" alike).
LIBRARY_STEPS = (
    ("get_connector_properties", "get_connector_properties"),
    ("disconnect_volume", "disconnect_volume"),
    ("connect_volume", "connect_volume"),
    ("virDomainAttachDeviceFlags", "virDomainAttachDeviceFlags"),
    ("virDomainDetachDeviceFlags", "virDomainDetachDeviceFlags"),
    ("virSecretUndefine", "secret undefined"),
    ("virSecret", "secret"),
    ("guest releases", "guest releases"),
    ("device added", "guest sees the disk"),
)


def _library_step(name):
    for needle, step in LIBRARY_STEPS:
        if needle in name:
            return step
    return None


def step_of(hop):
    """The seed's name for what ``hop`` does (None: the seed names no
    such step; its kind's words apply)."""
    kind, name = hop.get("kind"), hop.get("name") or ""
    if kind == "REST":
        method, path, action = _rest(name)
        action = (hop.get("details") or {}).get("action") or action
        if hop.get("actor") == "nova-api":
            if "/os-volume_attachments" in path:
                return {"POST": "attach request",
                        "DELETE": "detach request"}.get(method)
            return None
        if action in _ACTIONS:
            return _ACTIONS[action]
        if re.search(r"/volumes/\{id\}$", path) and method == "GET":
            return "volume get"
        if re.search(r"/attachments$", path) and method == "POST":
            return "attachment_create"
        if re.search(r"/attachments/\{id\}$", path):
            return {"PUT": "attachment_update",
                    "DELETE": "attachment_delete"}.get(method)
        return None
    if kind in ("CALL", "CAST") and name in (
            "reserve_block_device_name", "attach_volume", "detach_volume"):
        return name if hop.get("actor") == "rabbitmq" else name + " (host)"
    if kind == "LIBRARY":
        return _library_step(name)
    if kind == "COMMAND":
        if not name.startswith("tgtadm"):
            return None
        return "unexport" if "unbind" in name or "delete" in name \
            else "export"
    if kind == "DB":
        return _db_step(hop)
    return None


def says(step, kind, journey):
    """What the seed says about ``step`` (of a hop of ``kind``) in a
    ``journey`` (``"attach"``, ``"detach"`` or None: the attach's)."""
    if step not in _SAYS:
        return KIND_SAYS.get(kind, "")
    attach, detach = _SAYS[step]
    return detach if journey == "detach" and detach else attach


def role(actor):
    """A lane's role (the seed's cast of characters), or None."""
    return ROLES.get(actor)
