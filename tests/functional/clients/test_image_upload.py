"""``openstack image create --file``, ``image save`` and ``image
delete`` with the real CLI, against the image API the catalog names
(miniapi's, as keystone's ``image`` endpoint is in the lab).

The demo user uploads a 300 KiB file (above the API's 112 KiB body
limit, which an image's data is not held to): the image is active with
the file's size and MD5, private to the demo project (the admin of
another project's view aside), downloads byte for byte, and is deleted;
another project's user cannot delete it.
"""

import hashlib
import os

from tests.functional.clients.test_openstack_clients import _get

SIZE = 300 * 1024


def test_image_create_save_and_delete(deployment, tmp_path):
    demo = deployment["demo"]
    name = "cl%s-upload" % deployment["run"]
    data = os.urandom(SIZE)
    source = tmp_path / "upload.raw"
    source.write_bytes(data)
    image = demo.json("image", "create", "--file", str(source),
                      "--disk-format", "raw", "--container-format", "bare",
                      "--private", name)
    image_id = _get(image, "id")
    try:
        shown = demo.json("image", "show", image_id)
        assert _get(shown, "status") == "active", shown
        assert int(_get(shown, "size")) == SIZE
        assert _get(shown, "checksum") == hashlib.md5(data).hexdigest()
        assert _get(shown, "visibility") == "private"
        listed = demo.json("image", "list", "--name", name)
        assert [_get(i, "id") for i in listed] == [image_id]
        saved = tmp_path / "saved.raw"
        rc, out, err = demo.openstack("image", "save", "--file",
                                      str(saved), image_id)
        assert rc == 0, out + err
        assert saved.read_bytes() == data
    finally:
        rc, out, err = demo.openstack("image", "delete", image_id)
    assert rc == 0, out + err
    rc, out, err = demo.openstack("image", "show", image_id)
    assert rc != 0, out + err
    rc, out, err = demo.openstack("image", "delete", image_id)
    assert rc != 0


def test_image_delete_of_the_public_guest_image_is_refused(deployment):
    """The lab's guest image is public: the demo user sees it but may not
    delete it (403), and it stays."""
    demo = deployment["demo"]
    guest = deployment["image"]["id"]
    rc, out, err = demo.openstack("image", "delete", guest)
    assert rc != 0, out + err
    assert _get(demo.json("image", "show", guest), "status") == "active"
