"""Resolve a server's ``imageRef`` to a registered guest image.

Images are registered by devstack under ``<state_path>/images/<uuid>/
image.json`` and read through ``ministack.images``; a reference may be the
image id or its name, as ``openstack server create --image`` allows.
"""

from minicompute import exception


def _images_module():
    from ministack import images
    return images


def _as_dict(image):
    if isinstance(image, dict):
        return image
    return dict(vars(image))


def list_images(image_dir=None):
    """Every registered image as a dict (at least ``id`` and ``name``)."""
    images = _images_module()
    found = images.list_images(image_dir) if image_dir \
        else images.list_images()
    return [_as_dict(i) for i in found]


def find_image(ref, image_dir=None):
    """The image whose id or name is ``ref``.

    :raises ImageNotFound: no image, or the name matches several.
    """
    if not ref:
        raise exception.ImageNotFound(image_id=ref)
    matches = [i for i in list_images(image_dir) if i.get("id") == ref]
    if not matches:
        matches = [i for i in list_images(image_dir)
                   if i.get("name") == ref]
    if len(matches) != 1:
        raise exception.ImageNotFound(image_id=ref)
    return matches[0]
