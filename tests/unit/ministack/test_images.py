"""ministack.images: reading the image registry devstack writes."""

import json

import pytest

from ministack import exception
from ministack import images


def register(root, image_id, name, **extra):
    image_dir = root / image_id
    image_dir.mkdir(parents=True)
    record = {"id": image_id, "name": name,
              "kernel": str(image_dir / "vmlinuz"), "initrd": "initrd.img",
              "disk": str(image_dir / "disk.qcow2"), "min_disk": 1}
    record.update(extra)
    (image_dir / "image.json").write_text(json.dumps(record))
    return image_dir


def test_list_images_sorted_and_skips_junk(tmp_path):
    register(tmp_path, "bbb", "zeta")
    register(tmp_path, "aaa", "alpha")
    (tmp_path / ".build-x1").mkdir()          # a build in progress
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "image.json").write_text("{not json")
    (tmp_path / "empty").mkdir()
    assert [i["id"] for i in images.list_images(str(tmp_path))] == \
        ["aaa", "bbb"]


def test_missing_root_has_no_images(tmp_path):
    assert images.list_images(str(tmp_path / "nope")) == []


def test_get_image_by_id_or_name(tmp_path):
    image_dir = register(tmp_path, "aaa", "ministack-guest")
    by_id = images.get_image("aaa", root=str(tmp_path))
    assert images.get_image("ministack-guest", root=str(tmp_path)) == by_id
    assert by_id["kernel"] == str(image_dir / "vmlinuz")
    # Relative paths are resolved against the image directory.
    assert by_id["initrd"] == str(image_dir / "initrd.img")


def test_id_wins_over_name(tmp_path):
    register(tmp_path, "aaa", "bbb")
    register(tmp_path, "bbb", "other")
    assert images.get_image("bbb", root=str(tmp_path))["id"] == "bbb"


def test_unknown_image(tmp_path):
    register(tmp_path, "aaa", "ministack-guest")
    with pytest.raises(images.ImageNotFound) as info:
        images.get_image("nope", root=str(tmp_path))
    assert isinstance(info.value, exception.NotFound)
    assert info.value.code == 404
    assert "nope" in str(info.value)


class _Context:
    def __init__(self, project_id, is_admin=False):
        self.project_id = project_id
        self.is_admin = is_admin


def test_a_private_image_is_found_by_its_project_and_admins(tmp_path):
    register(tmp_path, "aaa", "ministack-guest")
    register(tmp_path, "snap", "vm-shelved", visibility="private",
             owner="p2")
    root = str(tmp_path)
    assert images.get_image("snap", root=root,
                            context=_Context("p2"))["id"] == "snap"
    assert images.get_image("vm-shelved", root=root,
                            context=_Context("p1", is_admin=True))["id"] \
        == "snap"
    for ref in ("snap", "vm-shelved"):
        with pytest.raises(images.ImageNotFound):
            images.get_image(ref, root=root, context=_Context("p1"))
    # the public image is everyone's; no context is the service itself
    assert images.get_image("aaa", root=root,
                            context=_Context("p1"))["id"] == "aaa"
    assert images.get_image("snap", root=root)["id"] == "snap"
