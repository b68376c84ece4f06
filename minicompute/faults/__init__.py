"""The seed's four failures, on demand, on a running lab (``ministack-fault``).

One mechanism for learners and tests alike: an admin arms a fault
(``ministack-fault arm NAME [--volume ID | --server ID] [--for
SECONDS]``, or the recovery tier's ``Stack.arm_fault``), and the next
attach or detach that matches really fails at the seed's step; its real
recovery path then runs.

Where the armed state lives, and why:

* **In the compute hosts' memory** (:mod:`.registry`), nowhere else. All
  four failures happen on the compute host (the hypervisor, its call to
  ``attachment_complete``, its answer to ``reserve_block_device_name``,
  its guest), so the host that runs the operation is the one that must
  know. Memory, not a table: a restarted minicompute has nothing armed
  and no option or row is left on, so a lab never runs armed by
  accident; and the attach path asks a dict, not the database (with
  nothing armed a fault point reads one dict's length).
* **miniapi holds nothing.** Its admin-only extension
  ``/v2.1/os-ministack-faults`` (``miniapi/api/ministack_faults.py``,
  ``miniapi/compute/faults.py``) checks the request (the name, the
  server or volume, who asks: 403 for a non-admin), builds the record
  (an id, who armed it, its lifetime) and CALLs ``arm_fault`` on the
  hosts that may run the operation: the server's host, or every host
  that is up for a volume (its next attach may go to any of them). A
  CALL rather than a cast: when the API answers, the fault is armed, so
  the attach typed next cannot overtake it; a host that does not answer
  rolls the arming back. Listing and disarming ask every host that is
  up, so what ``ministack-fault status`` and ``ministackctl status``
  show is what the hosts hold.
* **Expiry** is per host, on its monotonic clock from the moment it
  armed the fault (no clock has to agree with another): one shot by
  default, consumed by the first matching operation and expired unused
  after an hour, or every match during ``--for`` seconds. A one-shot
  fault armed on several hosts fires once: the host it fires on casts
  ``disarm_faults`` to every host (fanout), and the others drop their
  copy.
* **The fault points** (:mod:`.points`) are one named line each at the
  step of the attach or detach flow where the fault fires
  (``virt/block_device.py``, ``manager.py``). Each failure is
  real: the disk is really hot-plugged before the hypervisor "fails",
  the answer to the CALL is really held past the API's timeout, the real
  guest is really paused so it cannot release the disk. The one undo a
  fault owns (the paused guest) is done by the fault itself.
* Every arming, firing, expiry and disarming is logged at WARNING by
  minicompute, and every arming and disarming by miniapi, with who did
  it.

Modules: :mod:`.catalog` (the four faults in the seed's words, imported
by miniapi and the command too), :mod:`.registry` (the armed faults),
:mod:`.points` (where they fire), :mod:`.endpoint` (the RPC endpoint).
"""
