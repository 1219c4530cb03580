"""Shared by the benchmark scripts: the machine's description and appending to RESULTS.md.

Scripts run as `python benchmarks/<name>.py`, so this module imports as `common`.
"""

import datetime
import os
import platform

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "RESULTS.md")


def cpu_model():
    """The CPU's model name from /proc/cpuinfo (or platform's guess)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def machine():
    """Returns (description, one-minute load average)."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}", load


def append_section(title, lines):
    """Appends a dated `## title` section to benchmarks/RESULTS.md.

    Each line becomes a bullet, except Markdown table rows (starting with "|") and empty lines,
    which are written as they are (a table needs a blank line before it).
    """
    new = not os.path.exists(RESULTS)
    with open(RESULTS, "a", encoding="utf-8") as f:
        if new:
            f.write("# Benchmark results\n")
        f.write(f"\n## {title} ({datetime.date.today()})\n\n")
        for line in lines:
            f.write(f"{line}\n" if not line or line.startswith("|") else f"- {line}\n")
