# SPDX-License-Identifier: GPL-2.0
"""The ring records of a raw file (`taprootctl record --raw`; docs/design.md,
"Raw capture files"), for the VM tests that check what the module wrote:

    import rawrecords
    for rtype, rec in rawrecords.read(path):   # TAPROOT_REC_* type, its bytes
        ...

Each record is the ring's bytes, its header first (u32 size, u16 type,
u16 flags), as many as its chunk holds.
"""
import gzip
import struct

CHUNK_RECORD = 5        # u32 CPU, u32 0, then the record


def read(path):
    data = gzip.open(path).read()
    off = 0
    while off + 8 <= len(data):
        typ, ln = struct.unpack_from("<II", data, off)
        rec = data[off + 16:off + 8 + ln]
        off += 8 + ln
        if typ == CHUNK_RECORD and len(rec) >= 8:
            yield struct.unpack_from("<H", rec, 4)[0], rec
