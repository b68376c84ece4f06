"""How many SQL statements each step of minicinder's attachment handshake
runs on SQLite (a write transaction's ``BEGIN IMMEDIATE`` counted): pinned
by tests/unit/minicinder/test_handshake_statements.py, and the base the
functional tier's count on each real database starts from
(tests/functional/databases/test_handshake_reads.py)."""

RESERVE = 5       # BEGIN, lock+read volume, CAS, INSERT, read it back
FIRST_PUT = 8     # volume id, checks; BEGIN + export write; BEGIN, 2 CAS,
#                   read back
PUT_AGAIN = 6     # (the export exists: no export write)
COMPLETE = 4      # BEGIN, read attachment+volume, 2 CAS
BEGIN_DETACHING = 3   # BEGIN, read volume, CAS
DELETE = 9        # volume id, attachment, ref, connectors; BEGIN, lock,
#                   soft delete, remaining attachments, status
