#!/usr/bin/env python3
"""Checks META.json against the PGXN Meta Spec 1.0.0 (https://pgxn.org/spec/) and against the
repository: its version and every `provides` version are snowflake.control's
default_version, every file it names exists, and CHANGELOG.md has an entry for that version.

    test/meta_check.py                      META.json of this checkout
    test/meta_check.py --archive FILE.zip   also a release archive made by `make dist`, which
                                            also wants CHANGELOG.md's date for the version and
                                            META.json's resources (repository, bug tracker)

Prints every problem with the key it is about, and exits 1 if there is any."""

import argparse
import json
import re
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The spec's License strings.
LICENSES = {
    "agpl_3", "apache_1_1", "apache_2_0", "artistic_1", "artistic_2", "bsd", "freebsd",
    "gfdl_1_2", "gfdl_1_3", "gpl_1", "gpl_2", "gpl_3", "lgpl_2_1", "lgpl_3_0", "mit",
    "mozilla_1_0", "mozilla_1_1", "openssl", "perl_5", "postgresql", "qpl_1_0", "ssleay",
    "sun", "zlib", "open_source", "restricted", "unrestricted", "unknown",
}
REQUIRED = ("name", "abstract", "maintainer", "license", "provides", "meta-spec", "version")
OPTIONAL = ("description", "generated_by", "tags", "no_index", "prereqs", "release_status",
            "resources")
PHASES = ("configure", "build", "test", "runtime", "develop")
RELATIONS = ("requires", "recommends", "suggests", "conflicts")
RELEASE_STATUS = ("stable", "testing", "unstable")

SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?")
# A version range: comma-separated, each an optional operator and a version; "0" is any.
RANGE_ITEM = re.compile(r"\s*(==|!=|>=|<=|>|<)?\s*(\S+)\s*")
URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+")
EMAIL = re.compile(r"[^@\s]+@[^@\s]+")


class Checker:
    def __init__(self):
        self.errors = []
        self.where = "META.json"

    def fail(self, key, message):
        self.errors.append(f"{self.where}: {key}: {message}")

    def custom(self, key):
        """Keys starting with x_ or X_ are the spec's custom keys, allowed anywhere."""
        return key[:2] in ("x_", "X_")

    def string(self, key, value):
        if not isinstance(value, str) or not value.strip():
            self.fail(key, f"must be a non-empty string, not {value!r}")
            return False
        return True

    def term(self, key, value):
        """A Term: at least two characters, no slash, backslash, control or space character."""
        if self.string(key, value) and (len(value) < 2 or re.search(r"[/\\\s\x00-\x1f\x7f]", value)):
            self.fail(key, f"{value!r} is not a Term (two characters or more, no /, \\, "
                           "space or control character)")

    def tag(self, key, value):
        if self.string(key, value) and (len(value) >= 256 or re.search(r"[/\\\x00-\x1f\x7f]", value)):
            self.fail(key, f"{value!r} is not a Tag (under 256 characters, no /, \\ or control "
                           "character)")

    def semver(self, key, value):
        if self.string(key, value) and not SEMVER.fullmatch(value):
            self.fail(key, f"{value!r} is not a semantic version (major.minor.patch)")

    def uri(self, key, value):
        if self.string(key, value) and not URI.fullmatch(value):
            self.fail(key, f"{value!r} is not a URI")

    def obj(self, key, value):
        if not isinstance(value, dict):
            self.fail(key, f"must be an object, not {type(value).__name__}")
            return False
        return True

    def known_keys(self, key, value, allowed):
        for k in value:
            if k not in allowed and not self.custom(k):
                self.fail(f"{key}.{k}", f"is not a key of {key} in the spec (allowed: "
                                        f"{', '.join(allowed)}, or x_ custom keys)")

    def string_or_list(self, key, value, each):
        if isinstance(value, list):
            if not value:
                self.fail(key, "must not be an empty list")
            for i, v in enumerate(value):
                each(f"{key}[{i}]", v)
        else:
            each(key, value)

    def meta(self, meta):
        if not self.obj("META.json", meta):
            return
        for k in REQUIRED:
            if k not in meta:
                self.fail(k, "required key missing")
        self.known_keys("META.json", meta, REQUIRED + OPTIONAL)

        if "name" in meta:
            self.term("name", meta["name"])
        for k in ("abstract", "description", "generated_by"):
            if k in meta:
                self.string(k, meta[k])
        if "version" in meta:
            self.semver("version", meta["version"])
        if "maintainer" in meta:
            self.string_or_list("maintainer", meta["maintainer"], self.string)
        if "license" in meta:
            self.license(meta["license"])
        if "meta-spec" in meta and self.obj("meta-spec", meta["meta-spec"]):
            spec = meta["meta-spec"]
            self.known_keys("meta-spec", spec, ("version", "url"))
            if spec.get("version") != "1.0.0":
                self.fail("meta-spec.version", f"must be \"1.0.0\", not {spec.get('version')!r}")
            if "url" in spec:
                self.uri("meta-spec.url", spec["url"])
        if "provides" in meta:
            self.provides(meta["provides"])
        if "prereqs" in meta:
            self.prereqs(meta["prereqs"])
        if "release_status" in meta and meta["release_status"] not in RELEASE_STATUS:
            self.fail("release_status", f"{meta['release_status']!r} is not one of "
                                        f"{', '.join(RELEASE_STATUS)}")
        if "resources" in meta:
            self.resources(meta["resources"])
        if "tags" in meta:
            if not isinstance(meta["tags"], list) or not meta["tags"]:
                self.fail("tags", "must be a non-empty list of Tags")
            else:
                for i, t in enumerate(meta["tags"]):
                    self.tag(f"tags[{i}]", t)
        if "no_index" in meta and self.obj("no_index", meta["no_index"]):
            self.known_keys("no_index", meta["no_index"], ("file", "directory"))
            for k, v in meta["no_index"].items():
                if not self.custom(k):
                    self.string_or_list(f"no_index.{k}", v, self.string)

    def license(self, value):
        if isinstance(value, dict):
            if not value:
                self.fail("license", "must not be an empty object")
            for name, url in value.items():
                self.uri(f"license.{name}", url)
            return
        def one(key, v):
            if self.string(key, v) and v not in LICENSES:
                self.fail(key, f"{v!r} is not one of the spec's license strings")
        self.string_or_list("license", value, one)

    def provides(self, value):
        if not self.obj("provides", value):
            return
        if not value:
            self.fail("provides", "must name at least one extension")
        for ext, entry in value.items():
            key = f"provides.{ext}"
            self.term(key, ext)
            if not self.obj(key, entry):
                continue
            self.known_keys(key, entry, ("file", "version", "abstract", "docfile"))
            for k in ("file", "version"):
                if k not in entry:
                    self.fail(f"{key}.{k}", "required key missing")
            if "version" in entry:
                self.semver(f"{key}.version", entry["version"])
            for k in ("file", "docfile", "abstract"):
                if k in entry:
                    self.string(f"{key}.{k}", entry[k])

    def prereqs(self, value):
        if not self.obj("prereqs", value):
            return
        self.known_keys("prereqs", value, PHASES)
        for phase, relations in value.items():
            if self.custom(phase) or not self.obj(f"prereqs.{phase}", relations):
                continue
            self.known_keys(f"prereqs.{phase}", relations, RELATIONS)
            for relation, reqs in relations.items():
                key = f"prereqs.{phase}.{relation}"
                if self.custom(relation) or not self.obj(key, reqs):
                    continue
                for name, spec in reqs.items():
                    self.term(f"{key}.{name}", name)
                    self.version_range(f"{key}.{name}", spec)

    def version_range(self, key, spec):
        if spec == 0:  # the spec allows the number 0 for "any version"
            return
        if not self.string(key, spec):
            return
        for item in spec.split(","):
            m = RANGE_ITEM.fullmatch(item)
            if not m or not (m.group(2) == "0" and not m.group(1) or SEMVER.fullmatch(m.group(2))):
                self.fail(key, f"{spec!r} is not a version range (\"0\", a version, or "
                               "comma-separated operator and version pairs)")
                return

    def resources(self, value):
        if not self.obj("resources", value):
            return
        self.known_keys("resources", value, ("homepage", "bugtracker", "repository"))
        if "homepage" in value:
            self.uri("resources.homepage", value["homepage"])
        if "bugtracker" in value and self.obj("resources.bugtracker", value["bugtracker"]):
            bug = value["bugtracker"]
            self.known_keys("resources.bugtracker", bug, ("web", "mailto"))
            if not any(k in bug for k in ("web", "mailto")):
                self.fail("resources.bugtracker", "needs web or mailto")
            if "web" in bug:
                self.uri("resources.bugtracker.web", bug["web"])
            if "mailto" in bug and self.string("resources.bugtracker.mailto", bug["mailto"]) \
                    and not EMAIL.fullmatch(bug["mailto"]):
                self.fail("resources.bugtracker.mailto", f"{bug['mailto']!r} is not an address")
        if "repository" in value and self.obj("resources.repository", value["repository"]):
            repo = value["repository"]
            self.known_keys("resources.repository", repo, ("url", "web", "type"))
            if not any(k in repo for k in ("url", "web")):
                self.fail("resources.repository", "needs url or web")
            for k in ("url", "web"):
                if k in repo:
                    self.uri(f"resources.repository.{k}", repo[k])
            if "type" in repo and self.string("resources.repository.type", repo["type"]) \
                    and not re.fullmatch(r"[a-z]+", repo["type"]):
                self.fail("resources.repository.type", f"{repo['type']!r} must be lower case, "
                                                       "like git")
            if "url" in repo and "type" not in repo:
                self.fail("resources.repository.type", "required with resources.repository.url")


def default_version():
    control = (ROOT / "snowflake.control").read_text()
    m = re.search(r"^default_version\s*=\s*'([^']*)'", control, re.M)
    if not m:
        sys.exit("snowflake.control: no default_version")
    return m.group(1)


def check_repository(meta, c):
    """What the spec cannot know: the checkout agrees with META.json."""
    version = default_version()
    if meta.get("version") != version:
        c.fail("version", f"{meta.get('version')!r} is not snowflake.control's default_version "
                          f"{version!r}")
    for ext, entry in (meta.get("provides") or {}).items():
        if not isinstance(entry, dict):
            continue
        if entry.get("version") != version:
            c.fail(f"provides.{ext}.version", f"{entry.get('version')!r} is not "
                                              f"snowflake.control's default_version {version!r}")
        for k in ("file", "docfile"):
            if isinstance(entry.get(k), str) and not (ROOT / entry[k]).is_file():
                c.fail(f"provides.{ext}.{k}", f"{entry[k]!r} does not exist")
    changelog = (ROOT / "CHANGELOG.md").read_text()
    if not re.search(rf"^## {re.escape(version)}\b", changelog, re.M):
        c.fail("version", f"CHANGELOG.md has no \"## {version}\" entry")


def check_archive(path, meta, c):
    """A release archive: everything in snowflake-<version>/, with what PGXN and a build need."""
    c.where = str(path)
    top = f"{meta.get('name')}-{meta.get('version')}/"
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            inner = json.loads(z.read(top + "META.json")) if top + "META.json" in names else None
    else:
        with tarfile.open(path) as t:
            names = [m.name + ("/" if m.isdir() else "") for m in t.getmembers()]
            inner = json.load(t.extractfile(top + "META.json")) if top + "META.json" in names else None
    outside = [n for n in names if not n.startswith(top)]
    if outside:
        c.fail("archive", f"entries outside the top folder {top}: {', '.join(outside[:5])}")
    for need in ("META.json", "snowflake.control", "Makefile", "extension/snowflake.sql",
                 "LICENSE"):
        if top + need not in names:
            c.fail("archive", f"{top}{need} is missing")
    for unwanted in (".ci/", ".gitattributes"):
        if top + unwanted in names:
            c.fail("archive", f"{top}{unwanted} should not be released (export-ignore)")
    if inner is not None and inner != meta:
        c.fail("archive", "its META.json differs from the checkout's")
    # A release says where its code and its bug tracker are, and when it was made.
    resources = meta.get("resources") or {}
    for k in ("repository", "bugtracker"):
        if k not in resources:
            c.fail(f"resources.{k}", "a release needs it (PGXN shows it)")
    version = meta.get("version", "")
    changelog = (ROOT / "CHANGELOG.md").read_text()
    if not re.search(rf"^## {re.escape(version)} \(\d{{4}}-\d{{2}}-\d{{2}}\)$", changelog, re.M):
        c.fail("version", f"CHANGELOG.md's \"## {version}\" heading has no release date "
                          "(YYYY-MM-DD) in place of (unreleased)")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--meta", type=Path, default=ROOT / "META.json")
    p.add_argument("--archive", type=Path)
    args = p.parse_args()

    c = Checker()
    try:
        meta = json.loads(args.meta.read_text())
    except (OSError, ValueError) as e:
        sys.exit(f"{args.meta}: {e}")
    c.meta(meta)
    check_repository(meta, c)
    if args.archive:
        check_archive(args.archive, meta, c)
    if c.errors:
        for e in c.errors:
            print(e, file=sys.stderr)
        print(f"{len(c.errors)} problem(s)", file=sys.stderr)
        return 1
    print(f"{args.meta.name}: valid (PGXN Meta Spec 1.0.0), version {meta['version']}"
          + (f"; {args.archive.name}: complete" if args.archive else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
