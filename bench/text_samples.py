"""Samples for the dataset benchmarks: N lines of SAMPLE_KIB KiB of random letters each (no two
alike: each starts at another offset of one random block), written to PATH, and with --loose DIR
the same samples again as loose files, one a sample (DIR/000/000000.bin, ...), for a DataLoader
over loose files. Plain Python: any python3 runs it.

    text_samples.py PATH SAMPLES SAMPLE_KIB [--loose DIR]
"""
import base64
import os
import sys


def main(argv):
    if len(argv) not in (4, 6) or (len(argv) == 6 and argv[4] != "--loose"):
        sys.exit(__doc__)
    path, n, size = argv[1], int(argv[2]), int(argv[3]) * 1024
    loose = argv[5] if len(argv) == 6 else None
    block = base64.b64encode(os.urandom(size)).translate(bytes.maketrans(b"+/", b"-_"))[:size + 96]
    with open(path, "wb") as f:
        for i in range(n):
            f.write(block[i % 97:i % 97 + size] + b"\n")
    if loose:
        for i in range(n):
            d = os.path.join(loose, "%03d" % (i // 1000))
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "%06d.bin" % i), "wb") as f:
                f.write(block[i % 97:i % 97 + size])


if __name__ == "__main__":
    main(sys.argv)
