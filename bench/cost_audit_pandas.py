#!/usr/bin/python3
"""The pandas peer of the bill-audit benchmark: reads a Cost and Usage Report CSV and computes
the effective on-demand rate per instance type and region, the figure `tensorfleet cost audit`
reports as effective_rates. Same rows, same rule:

  line item type Usage or SavingsPlanCoveredUsage, usage type BoxUsage/DedicatedUsage/HostUsage
  (after an optional region prefix), pricing term not Spot, usage amount > 0;
  hours = sum(usage amount), usd = sum(unblended cost), per (instance type, region).

Usage: cost_audit_pandas.py BILL.csv OUT.csv
"""
import sys

import pandas as pd

PREFIXES = ("USE1|USE2|USW1|USW2|CAN1|CAC1|EUC1|EUC2|EUW1|EUW2|EUW3|EUN1|EUS1|EUS2|APN1|APNE1|"
            "APN2|APN3|APS1|APS2|APS3|APS4|APS5|APE1|SAE1|MES1|MEC1|AFS1|ILC1|UGW1")


def column(header, snake):
    """The column's name in this file: CUR 2.0 snake case or its legacy spelling."""
    if snake in header:
        return snake
    for h in header:
        legacy = h.replace("/", "_")
        legacy = "".join("_" + c.lower() if c.isupper() else c for c in legacy)
        legacy = legacy.replace("__", "_").lstrip("_")
        if legacy == snake:
            return h
    return None


def main(path, out):
    header = pd.read_csv(path, nrows=0).columns.tolist()
    names = {k: column(header, k) for k in (
        "line_item_line_item_type", "line_item_usage_type", "line_item_usage_amount",
        "line_item_unblended_cost", "product_instance_type", "product_region_code",
        "product_region", "pricing_term")}
    use = [v for v in names.values() if v]
    df = pd.read_csv(path, usecols=use, dtype={c: "string" for c in use if c not in (
        names["line_item_usage_amount"], names["line_item_unblended_cost"])})
    usage_type = df[names["line_item_usage_type"]]
    prefix = usage_type.str.extract("^(" + PREFIXES + ")-", expand=False)
    base = usage_type.str.replace("^(" + PREFIXES + ")-", "", regex=True)
    kind = base.str.split(":", n=1).str[0]
    detail = base.str.split(":", n=1).str[1]
    region_col = names["product_region_code"] or names["product_region"]
    region = df[region_col] if region_col else pd.Series(pd.NA, index=df.index, dtype="string")
    region_names = {"USE1": "us-east-1", "USE2": "us-east-2", "USW1": "us-west-1",
                    "USW2": "us-west-2", "EUW1": "eu-west-1", "EUC1": "eu-central-1",
                    "APN1": "ap-northeast-1", "APS1": "ap-southeast-1"}
    region = region.fillna(prefix.map(region_names)).fillna("us-east-1")
    itype = df[names["product_instance_type"]].fillna(detail) if names["product_instance_type"] \
        else detail
    term = df[names["pricing_term"]].fillna("") if names["pricing_term"] else ""
    usage = df[names["line_item_usage_amount"]]
    mask = (df[names["line_item_line_item_type"]].isin(["Usage", "SavingsPlanCoveredUsage"])
            & kind.isin(["BoxUsage", "DedicatedUsage", "HostUsage"])
            & (term != "Spot") & (usage > 0))
    rates = pd.DataFrame({"instance_type": itype[mask], "region": region[mask],
                          "hours": usage[mask], "usd": df[names["line_item_unblended_cost"]][mask]})
    result = rates.groupby(["instance_type", "region"], sort=True).sum()
    result["usd_per_hour"] = result["usd"] / result["hours"]
    result.to_csv(out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
