"""``workbench route REQUESTS ROUTES --models MODELS [--compare ROUTES2]``: a router's
hit@1, MRR, recall@k and cost view per category (:mod:`workbench.evaluation.routing`)."""

from __future__ import annotations

import argparse

from workbench.evaluation.routing import (
    compare_routers,
    evaluate_router,
    load_costs,
    load_requests,
    load_routes,
)
from workbench.stats import comparison_table


def run_route_command(args: argparse.Namespace) -> int:
    requests = load_requests(args.requests)
    costs = load_costs(args.models)
    ev = evaluate_router(requests, load_routes(args.routes), costs, k=args.k, name=args.routes)
    print(ev.summary().round(4).to_string())
    if args.compare:
        other = evaluate_router(requests, load_routes(args.compare), costs, k=args.k,
                                name=args.compare)
        table = comparison_table(compare_routers(ev, other, m) for m in ("hit@1", "mrr"))
        print(table.drop(columns=["flipped"], errors="ignore").round(4).to_string())
    return 0
