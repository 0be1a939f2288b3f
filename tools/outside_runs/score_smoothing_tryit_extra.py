# Extra cell for run_chapter_at_seed.py (Try it: LAMS = (0.0, 1e-2)): the 2-D sample metrics and, per lambda,
# the fitted collapsing zone and the loss against the ESF over the fitted noise levels.
print(metrics.round(4).to_string())
print(learned.round(4).to_string())
