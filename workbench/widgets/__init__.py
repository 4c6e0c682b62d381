"""Thin views over results objects; each has a static HTML/figure form for reports."""
