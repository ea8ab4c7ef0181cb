"""A new snapshot's registry record, made from its row hash: by a full build
(strata/engine/run/build.py) and by a merge (strata/engine/incremental.py) alike,
so it sits below both."""

from __future__ import annotations

from strata.clock import now_text
from strata.engine import history as H
from strata.engine.fingerprints import RowHash


def make_record(name: str, model: str, rid: str, kind: str, hashed: RowHash,
                columns: list[tuple[str, str]], code_fp: str, parts: dict) -> H.SnapshotRecord:
    return H.SnapshotRecord(
        name=name, model=model, run_id=rid, kind=kind, content_hash=hashed.digest(columns),
        row_count=hashed.count, hash_sum=str(hashed.total), hash_xor=str(hashed.xor),
        columns=[list(c) for c in columns], code_fp=code_fp, parts=parts, created_at=now_text())
