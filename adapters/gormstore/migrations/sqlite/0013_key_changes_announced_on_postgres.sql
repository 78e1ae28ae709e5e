-- key changes announced on Postgres
--
-- Postgres announces every change to a key but its last use when the
-- change commits, so that each process can keep keys in memory. The
-- trigger sees every writer: a replica, the admin console, an owner's
-- deletion.

