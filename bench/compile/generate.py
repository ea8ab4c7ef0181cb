"""Write one synthetic Strata module of N models, to time the compile path.

The module mixes every shape the compiler handles, in repeating groups of eleven
models that read each other (chains) and a shared upstream (fans):

  stage_i      from orders, lets + base filters, incremental upsert (pushdown path)
  paid_i       from stage_i, filter, derive                   (chain)
  enriched_i   from paid_i, join customers, join_left products as p, derive, select
  by_region_i  from enriched_i, group + aggregate, filter after aggregate (HAVING)
  daily_i      from stage_i, group + aggregate, derive date_trunc/year (fan)
  events_i     from a file source, let, expand, filters, incremental append
               (full-then-filter path: expand)
  late_i       from enriched_i, join_left by_region_i, incremental upsert on a
               joined column (full-then-filter path)
  wide_i       from paid_i, case/cast/coalesce/between/date_diff, pin columns
  stage_i_ids  from stage_i, filter, select
  both_i       from paid_i, select, union_distinct stage_i_ids
  top_i        from by_region_{i-1} (or by_region_i), filter   (chain across groups)

Deterministic: the same N gives the same text.

    python bench/compile/generate.py --models 1000 --out bench/compile/work/m1000.strata
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

SOURCES = """\
source orders {
  id: int
  customer_id: int
  product_id: int
  amount: decimal(12, 2)
  quantity: int
  status: text
  tags: list<text>
  created_at: date
  updated_at: timestamp
}

source customers = raw.crm_customers {
  id: int
  name: text
  region: text
  tier: text
}

source products {
  id: int
  title: text
  category: text
  price: decimal(10, 2)
}

source events = file 'data/events.parquet' {
  id: int
  kind: text
  labels: list<text>
  seq: int
  at: timestamp
}
"""


def group(i: int) -> str:
    prev = f"by_region_{i - 1}" if i > 0 else f"by_region_{i}"
    return f"""
model stage_{i} {{
  from orders
  let net = amount * 0.9, big = quantity > {i % 7 + 1}
  filter status != 'void' and amount > {i % 50}
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: updated_at
  pin unique [id]
}}

model paid_{i} {{
  from stage_{i}
  filter status = 'paid' or status = 'shipped'
  derive net_{i} = net - {i % 10}, label = upper(status) || '-{i}'
}}

model enriched_{i} {{
  from paid_{i}
  join customers on customer_id = customers.id
  join_left products as p on product_id = p.id
  derive revenue = net_{i} * quantity, region_tier = region || '/' || tier
  select id, customer_id, product_id, region, region_tier, revenue, p.category as category,
         updated_at, created_at
  pin not_null [region]
}}

model by_region_{i} {{
  from enriched_{i}
  group region, category
  aggregate orders = count(), revenue = sum(revenue), last_update = max(updated_at),
            customers = count_distinct(customer_id)
  filter orders > {i % 5}
  pin rows >= 0
}}

model daily_{i} {{
  from stage_{i}
  group created_at
  aggregate n = count(), total = sum(net), avg_qty = avg(quantity)
  derive month = date_trunc('month', created_at), year = year(created_at)
}}

model events_{i} {{
  from events
  let seq2 = seq * 2
  filter kind in ('click', 'view', 'buy')
  expand labels as label
  filter label != 'bot'
  derive label_len = length(label)
  incremental
  merge_strategy: append
  cdc_column: at
}}

model late_{i} {{
  from enriched_{i}
  join_left by_region_{i} as br on region = br.region and category = br.category
  derive share = revenue / coalesce(br.revenue, 1), seen = br.last_update
  select id, region, share, seen
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: seen
}}

model wide_{i} {{
  from paid_{i}
  derive bucket = case when amount < 10 then 'small' when amount < 100 then 'medium'
                  else 'large' end,
         qty_text = cast(quantity as text), safe = coalesce(status, 'none'),
         in_range = amount between {i % 3} and {i % 3 + 1000},
         days = date_diff('day', created_at, updated_at), rounded = round(net, 1)
  filter bucket != 'small' and days >= 0
  select id, bucket, qty_text, safe, in_range, days, rounded
  pin columns {{ id: int, bucket: text, qty_text: text, safe: text, in_range: bool,
                days: int, rounded: decimal(12, 2) }}
}}

model stage_{i}_ids {{
  from stage_{i}
  filter quantity > 1
  select id, customer_id, amount
}}

model both_{i} {{
  from paid_{i}
  select id, customer_id, amount
  union_distinct stage_{i}_ids
}}

model top_{i} {{
  from {prev}
  filter revenue > 100 and region != 'unknown'
  derive score = revenue / orders
}}
"""


def module_text(models: int) -> str:
    """The sources plus the first `models` models of as many groups as needed."""
    blocks: list[str] = []
    i = 0
    while len(blocks) < models:
        blocks += ["model " + b.strip() + "\n"
                   for b in re.split(r"^model ", group(i), flags=re.MULTILINE) if b.strip()]
        i += 1
    return SOURCES + "".join("\n" + b for b in blocks[:models])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(module_text(args.models))
    print(f"wrote {args.out} ({args.models} models)")


if __name__ == "__main__":
    main()
