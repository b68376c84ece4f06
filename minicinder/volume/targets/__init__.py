"""iSCSI targets: tgtd driven through tgtadm's socket, and the names
an ACL accepts."""
