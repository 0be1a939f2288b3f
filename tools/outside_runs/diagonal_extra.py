# Extra cell for run_chapter_at_seed.py: the network-vs-LASSO table (distance, gradient norm, L-BFGS steps).
print(net_table.to_string())
