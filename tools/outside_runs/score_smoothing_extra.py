# Extra cell for run_chapter_at_seed.py: the d = 20 sphere table (per network and nulls) and the fitted
# collapsing-zone exponents of the line networks.
for lam, grp in learned.groupby("lambda"):
    pl = fitting.power_law_fit(grp["t"].to_numpy(), grp["kappa fit (a delta / sqrt t)"].to_numpy() * np.sqrt(grp["t"].to_numpy()))
    print(f"lambda={lam:g}: fitted collapsing half-width ~ t^{pl.slope:.2f}")
print(sphere_table.round(3).to_string())
