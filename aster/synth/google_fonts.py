"""`make fonts-google`: Google Fonts families from their @fontsource npm packages.

    python -m aster.synth.google_fonts --out_dir data/fonts_google

Each package named in google_fonts.txt (name and pinned version) is fetched with `npm pack` (a
tarball, nothing installed) into a scratch folder, and only what the word engine reads is kept:

    data/fonts_google/<id>/metadata.json                  family, category, license
    data/fonts_google/<id>/LICENSE
    data/fonts_google/<id>/files/<id>-latin-<weight>-<style>.woff2
    data/fonts_google/<id>/files/<id>-latin-<weight>-<style>.ttf    its TrueType twin

The twins (written once, for the faces the engine uses) are what the renderer opens: FreeType
decompresses a .woff2 at every open, ~60 ms for a large face. The tarball and npm's cache are
deleted. manifest.json records each package's version, status and the files kept; a rerun fetches
only the packages not already present at their version (and deletes the families of packages no
longer listed). A package the registry does not have is one line and the run goes on; when npm
cannot reach the registry at all, the run says so in one line and stops fetching, keeping what it
has. `aster-synth-words --google_fonts data/fonts_google` reads the folder (fontsource.py).
"""

import argparse
import concurrent.futures
import dataclasses
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time

from aster.synth import fontsource, render

PACKAGE_LIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "google_fonts.txt")
MANIFEST = "manifest.json"
# Statuses of a package in the manifest. OK and NO_LATIN are final (a rerun skips them).
OK, NO_LATIN, MISSING, FAILED, OFFLINE = "ok", "no-latin", "missing", "failed", "offline"
_FINAL = (OK, NO_LATIN)
# npm's words for "the registry cannot be reached" (then no further package is tried).
_NETWORK_ERRORS = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT",
                   "ENETUNREACH", "EHOSTUNREACH", "network")


@dataclasses.dataclass(frozen=True)
class Package:
    """One line of the package list: an npm package name and its pinned version."""
    name: str
    version: str

    @property
    def font_id(self):
        """The fontsource id (`@fontsource/abel` -> `abel`), also the family's folder name."""
        return self.name.rsplit("/", 1)[-1]


def read_package_list(path=PACKAGE_LIST):
    """Reads "name version" lines (`#` comments and blank lines skipped).

    Args:
      path: the package list.

    Returns:
      A list of Package.

    Raises:
      ValueError: a line that is not an @fontsource name and a version.
    """
    packages = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.split()
            if len(fields) != 2 or not re.fullmatch(r"@fontsource/[a-z0-9-]+", fields[0]):
                raise ValueError(f"{path}:{number}: expected '@fontsource/<id> <version>', "
                                 f"got {line!r}")
            packages.append(Package(*fields))
    return packages


def wanted_member(font_id, member_name):
    """Where a tarball member goes in the family folder, or None when it is not kept.

    Args:
      font_id: the package's fontsource id.
      member_name: the member's path in the tarball (`package/...`).

    Returns:
      The relative destination path, or None.
    """
    path = member_name.split("/", 1)[-1]
    if path in ("metadata.json", "LICENSE"):
        return path
    if re.fullmatch(rf"files/{re.escape(font_id)}-latin-\d+-(normal|italic)\.woff2", path):
        return path
    return None


def extract_family(tarball, font_id, family_dir):
    """Writes the kept members of a package tarball into family_dir (replacing it whole).

    Args:
      tarball: the `npm pack` tarball.
      font_id: the package's fontsource id.
      family_dir: the destination folder.

    Returns:
      The sorted relative paths written.
    """
    staging = family_dir + ".partial"
    shutil.rmtree(staging, ignore_errors=True)
    kept = []
    with tarfile.open(tarball, "r:gz") as tar:
        for member in tar.getmembers():
            relative = wanted_member(font_id, member.name) if member.isfile() else None
            if relative is None:
                continue
            target = os.path.join(staging, relative)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with tar.extractfile(member) as source, open(target, "wb") as sink:
                shutil.copyfileobj(source, sink)
            kept.append(relative)
    shutil.rmtree(family_dir, ignore_errors=True)
    os.makedirs(staging, exist_ok=True)
    os.replace(staging, family_dir)
    return sorted(kept)


def _npm_pack(npm, package, destination, cache, timeout):
    """Runs `npm pack` for one package; returns (tarball path or None, one-line error)."""
    command = [npm, "pack", f"{package.name}@{package.version}", "--pack-destination",
               destination, "--cache", cache, "--loglevel", "error", "--no-update-notifier"]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                                check=False)
    except subprocess.TimeoutExpired:
        return None, f"npm pack timed out after {timeout} s"
    tarballs = [n for n in os.listdir(destination) if n.endswith(".tgz")]
    if result.returncode == 0 and len(tarballs) == 1:
        return os.path.join(destination, tarballs[0]), ""
    lines = [ln.strip() for ln in (result.stderr + result.stdout).splitlines() if ln.strip()]
    detail = next((ln for ln in lines if " code " in ln or "E404" in ln), lines[0] if lines else "")
    return None, f"npm pack exit {result.returncode}: {detail[:200]}"


def fetch_package(package, out_dir, npm="npm", timeout=300):
    """Fetches one package and keeps its family folder.

    Args:
      package: the Package.
      out_dir: the library folder.
      npm: the npm program.
      timeout: seconds for `npm pack`.

    Returns:
      A manifest entry (dict with version, status, files and, on failure, error).
    """
    entry = {"version": package.version, "files": []}
    scratch = tempfile.mkdtemp(prefix=f".fetch-{package.font_id}-", dir=out_dir)
    try:
        tarball, error = _npm_pack(npm, package, scratch, os.path.join(out_dir, ".npm-cache"),
                                   timeout)
        if tarball is None:
            if "E404" in error or "404" in error:
                entry["status"] = MISSING
            elif any(word in error for word in _NETWORK_ERRORS):
                entry["status"] = OFFLINE
            else:
                entry["status"] = FAILED
            entry["error"] = error
            return entry
        family_dir = os.path.join(out_dir, package.font_id)
        entry["files"] = extract_family(tarball, package.font_id, family_dir)
        has_faces = any(f.endswith(".woff2") for f in entry["files"])
        entry["status"] = OK if has_faces and "metadata.json" in entry["files"] else NO_LATIN
        if entry["status"] == NO_LATIN:  # nothing the engine can use: nothing kept
            shutil.rmtree(family_dir, ignore_errors=True)
            entry["files"] = []
        return entry
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def read_manifest(out_dir):
    """The manifest's package entries ({} when there is none yet)."""
    path = os.path.join(out_dir, MANIFEST)
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)["packages"]


def write_manifest(out_dir, entries):
    """Writes manifest.json (atomically): the entries and a count per status."""
    counts = {}
    for entry in entries.values():
        counts[entry["status"]] = counts.get(entry["status"], 0) + 1
    path = os.path.join(out_dir, MANIFEST)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump({"counts": counts, "packages": dict(sorted(entries.items()))}, f, indent=1)
    os.replace(path + ".tmp", path)


def is_present(entry, package, out_dir):
    """Whether a manifest entry already holds this package at its version, files on disk."""
    if not entry or entry.get("version") != package.version or entry.get("status") not in _FINAL:
        return False
    family_dir = os.path.join(out_dir, package.font_id)
    return all(os.path.exists(os.path.join(family_dir, f)) for f in entry["files"])


def prune(packages, out_dir, log=print):
    """Deletes the family folders and manifest entries of packages no longer in the list.

    Returns:
      The names removed.
    """
    entries = read_manifest(out_dir)
    listed = {p.name for p in packages}
    removed = sorted(set(entries) - listed)
    for name in removed:
        shutil.rmtree(os.path.join(out_dir, name.rsplit("/", 1)[-1]), ignore_errors=True)
        del entries[name]
    if removed:
        write_manifest(out_dir, entries)
        log(f"removed {len(removed)} packages no longer listed: {', '.join(removed)}")
    return removed


def fetch_all(packages, out_dir, npm="npm", jobs=4, timeout=300, log=print):
    """Fetches the packages not yet present, `jobs` at a time, and writes the manifest.

    Args:
      packages: a list of Package.
      out_dir: the library folder (created).
      npm: the npm program.
      jobs: parallel `npm pack` processes.
      timeout: seconds for one `npm pack`.
      log: a function printing one line.

    Returns:
      The manifest's package entries after the run.
    """
    os.makedirs(out_dir, exist_ok=True)
    entries = read_manifest(out_dir)
    todo = [p for p in packages if not is_present(entries.get(p.name), p, out_dir)]
    log(f"{len(packages) - len(todo)} of {len(packages)} packages already in {out_dir}; "
        f"fetching {len(todo)} ({jobs} at a time)")
    offline = threading.Event()

    def task(package):
        if offline.is_set():
            return package, None
        return package, fetch_package(package, out_dir, npm, timeout)

    done = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for package, entry in pool.map(task, todo):
            done += 1
            if entry is None:
                continue
            if entry["status"] == OFFLINE:
                if not offline.is_set():
                    log(f"npm cannot reach the registry ({entry['error']}): stopping, keeping "
                        f"what {out_dir} has")
                offline.set()
                continue
            entries[package.name] = entry
            faces = sum(f.endswith(".woff2") for f in entry["files"])
            detail = entry.get("error", f"{faces} latin faces")
            log(f"[{done}/{len(todo)}] {package.name}@{package.version}: {entry['status']} "
                f"({detail})")
            if done % 25 == 0:
                write_manifest(out_dir, entries)
    shutil.rmtree(os.path.join(out_dir, ".npm-cache"), ignore_errors=True)
    write_manifest(out_dir, entries)
    return entries


def _write_twin(face):
    """Writes the TrueType twin of one .woff2 face (atomically); returns the face, or an error."""
    twin = render.truetype_twin(face)
    if os.path.exists(twin):
        return face, None
    from fontTools.ttLib import woff2  # brotli

    tmp = f"{twin}.tmp{os.getpid()}"
    try:
        woff2.decompress(face, tmp)
        os.replace(tmp, twin)
    except Exception as err:  # a damaged face: reported, the .woff2 is still used as it is
        if os.path.exists(tmp):
            os.remove(tmp)
        return face, f"{type(err).__name__}: {err}"
    return face, None


def write_truetype_twins(out_dir, jobs=2, log=print):
    """Writes a TrueType twin beside every face the engine uses (fontsource.chosen_faces), once.

    FreeType decompresses a .woff2 face every time it opens one; the renderer opens faces at
    every size it draws, so it reads the twin instead (render.py). Decompressing takes fontTools
    ~0.5 s a face, once: a rerun converts only faces without a twin.

    Returns:
      The number of twins written.
    """
    faces, _ = fontsource.library_faces(out_dir)
    todo = [f for f in faces if not os.path.exists(render.truetype_twin(f))]
    if not todo:
        return 0
    log(f"writing TrueType twins of {len(todo)} faces ({jobs} processes; once)")
    written = 0
    with multiprocessing.Pool(max(1, jobs)) as pool:
        for i, (face, error) in enumerate(pool.imap_unordered(_write_twin, todo), 1):
            if error:
                log(f"{face}: no TrueType twin ({error}); the .woff2 is read as it is")
            else:
                written += 1
            if i % 200 == 0 or i == len(todo):
                log(f"[twins] {i}/{len(todo)}")
    return written


def main(argv=None):
    """Command line: fetches the library and prints a summary line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out_dir", default="data/fonts_google")
    parser.add_argument("--package_list", default=PACKAGE_LIST,
                        help="'name version' lines (default: aster/synth/google_fonts.txt)")
    parser.add_argument("--only", nargs="*", default=None,
                        help="fetch only these fontsource ids (e.g. abel lobster-two)")
    parser.add_argument("--jobs", type=int, default=4, help="parallel npm pack processes")
    parser.add_argument("--npm", default="npm", help="the npm program")
    args = parser.parse_args(argv)
    packages = read_package_list(args.package_list)
    if args.only is not None:
        unknown = sorted(set(args.only) - {p.font_id for p in packages})
        if unknown:
            parser.error(f"--only: {unknown} not in {args.package_list}")
        packages = [p for p in packages if p.font_id in args.only]
    if shutil.which(args.npm) is None:
        print(f"--npm {args.npm!r}: not found on PATH; {args.out_dir} left as it is")
        return 0
    start = time.time()
    if args.only is None:
        prune(packages, args.out_dir, log=print)
    entries = fetch_all(packages, args.out_dir, args.npm, args.jobs,
                        log=lambda line: print(line, flush=True))
    if any(entry.get("status") == OK for entry in entries.values()):
        write_truetype_twins(args.out_dir, max(1, min(args.jobs, os.cpu_count() or 1)),
                             log=lambda line: print(line, flush=True))
    usable = sum(entries.get(p.name, {}).get("status") == OK for p in packages)
    size = sum(os.path.getsize(os.path.join(root, name))
               for root, _, names in os.walk(args.out_dir) for name in names)
    print(f"{usable} of {len(packages)} families in {args.out_dir} ({size / 1e6:.1f} MB), "
          f"{time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
