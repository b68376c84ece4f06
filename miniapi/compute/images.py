"""Resolve a server's ``imageRef`` to a registered guest image.

Images are registered by devstack under ``<state_path>/images/<uuid>/
image.json`` and read through ``ministack.images``; a reference may be the
image id or its name, as ``openstack server create --image`` allows.
"""

from minicompute import exception
from ministack import exception as ms_exception
from ministack.images import visible_to


def _images_module():
    from ministack import images
    return images


def _as_dict(image):
    if isinstance(image, dict):
        return image
    return dict(vars(image))


def list_images(context, image_dir=None):
    """Every registered image ``context``'s caller may see (its project's
    private snapshots, every public image; an admin all), as dicts (at
    least ``id`` and ``name``)."""
    images = _images_module()
    found = images.list_images(image_dir) if image_dir \
        else images.list_images()
    return [i for i in (_as_dict(f) for f in found)
            if visible_to(i, context.project_id, context.is_admin)]


def check_active(image):
    """An image a server boots or rebuilds from must be ``active`` (one
    created but not uploaded is not), as nova's ``ImageNotActive``.

    :raises Invalid: 400 "Image X is not active."
    """
    if image.get("status", "active") != "active":
        raise ms_exception.Invalid(
            message="Image %s is not active." % image.get("id"))


def find_image(context, ref, image_dir=None):
    """The image whose id or name is ``ref``, among those ``context``'s
    caller may see: another project's private snapshot is not found, as
    Glance answers nova for it.

    :raises ImageNotFound: no image, or the name matches several.
    """
    if not ref:
        raise exception.ImageNotFound(image_id=ref)
    found = list_images(context, image_dir)
    matches = [i for i in found if i.get("id") == ref]
    if not matches:
        matches = [i for i in found if i.get("name") == ref]
    if len(matches) != 1:
        raise exception.ImageNotFound(image_id=ref)
    return matches[0]
