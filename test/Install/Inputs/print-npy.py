# Prints a .npy result the way run-entry.c does: its shape, then each value.
import sys
import numpy as np
y = np.load(sys.argv[1])
print("shape " + " ".join(str(d) for d in y.shape))
for v in y.reshape(-1):
    print("%.6e" % float(v))
