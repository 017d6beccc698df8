#!/usr/bin/python3
"""Checks that the man page, the shell completions, the README and docs/ agree with the binary
and the code.

    check_docs.py REDLOCKRUN SOURCE_DIR

- every option that `redlockrun --help` lists (short and long) is documented in the man page's
  OPTIONS section and offered by the bash, zsh and fish completions;
- the exit statuses of the man page's EXIT STATUS table, of --help and of src/base/exit_status.hpp are
  the same, and so are the option defaults that --help and the man page state;
- the man page's version and the RPM spec's are the binary's;
- the commands the man page tells ACL users to allow are those the Lua scripts call;
- --help's --url entry, the man page's Precedence and the README's give the same order of the
  places the server comes from;
- the man page's COMPATIBILITY lists the servers the tests run against: those of the compat
  label (COMPAT_SERVERS, which tests/compat/build-servers builds) and Debian's;
- in README.md and docs/*.md, every relative link leads to a file that exists, and every #anchor
  to a heading of it (GitHub's slugs); every long option they name for redlockrun is one that
  --help lists; the ACL rule of docs/lock.md allows every command the lock's scripts call; and the
  README stays under README_MAX_LINES lines, so that it reads in a few minutes;
- docs/reliability.md, the fault suite's long run, reports on the scenarios that
  `tests/faults/run --list` lists, each once, in its table and in its promises: a scenario added,
  renamed or removed since the report was written makes it stale; it reports no unexplained
  overlap and no scenario but ok, and docs/performance.md no target but passed;
- docs/performance.md and docs/reliability.md come from the src/ of HEAD: the commit each names
  is HEAD or before it, and no commit after it changed src/.

Prints one line per problem, naming the file and what is missing, and exits 1 if there is any.
"""

import re
import shlex
import subprocess
import sys
from pathlib import Path

problems = []


def problem(text):
    problems.append(text)


# --help -------------------------------------------------------------------------------------------

OPTION_LINE = re.compile(r"^ {1,8}-")  # continuation lines are indented much deeper
OPTION_NAME = re.compile(r"^--?[A-Za-z][-A-Za-z]*$")


def help_entries(help_text):
    """Yields (names, text) for each option of --help: its names and its whole description."""
    entry = None
    for line in help_text.splitlines():
        if OPTION_LINE.match(line):
            if entry:
                yield entry
            head, _, description = line.strip().partition("  ")
            names = []
            for part in head.split(", "):
                name = part.split(" ")[0]
                if OPTION_NAME.match(name):
                    names.append(name)
            entry = (names, description.strip())
        elif entry and line.startswith("    ") and line.strip():
            entry = (entry[0], entry[1] + " " + line.strip())
        else:
            if entry:
                yield entry
            entry = None
    if entry:
        yield entry


def exit_statuses_in_help(help_text):
    match = re.search(r"^Exit status:(.*?)(?:\n\n|\Z)", help_text, re.S | re.M)
    if not match:
        problem("--help: no 'Exit status:' paragraph")
        return set()
    return {int(n) for n in re.findall(r"(?<![\d+])(\d{2,3})(?![\d+])", match.group(1))}


# The man page -------------------------------------------------------------------------------------


def plain_roff(text):
    """Roff text with its escapes resolved the way a reader sees it: \\- is -, fonts vanish."""
    text = re.sub(r"\\f(\[[^\]]*\]|\(..|.)", "", text)
    text = text.replace("\\-", "-").replace("\\(hy", "-").replace("\\(aq", "'")
    text = text.replace("\\%", "").replace("\\&", "").replace("\\e", "\\")
    return text


def man_sections(page):
    """Maps each .SH name to the lines under it."""
    sections = {}
    current = None
    for line in page.splitlines():
        match = re.match(r'^\.SH\s+"?([^"]*)"?\s*$', line)
        if match:
            current = match.group(1).strip()
            sections[current] = []
        elif current:
            sections[current].append(line)
    return sections


def man_option_entries(lines):
    """Yields (tag, body) for each .TP entry: the tag line (resolved) and the text below it."""
    i = 0
    while i < len(lines):
        if lines[i].startswith(".TP"):
            tag = plain_roff(lines[i + 1]) if i + 1 < len(lines) else ""
            body = []
            i += 2
            while i < len(lines) and not re.match(r"^\.(TP|SS|SH|PP|P|LP)\b", lines[i]):
                body.append(lines[i])
                i += 1
            text = " ".join(plain_roff(re.sub(r"^\.[A-Z]{1,2}\s+", "", l)) for l in body)
            yield tag, text.replace('"', "")
        else:
            i += 1


def words_of(text):
    return set(re.findall(r"(?<![\w-])--?[A-Za-z][-A-Za-z]*", text))


def exit_statuses_in_man(lines):
    """The statuses of the EXIT STATUS table (its rows' first cells) and whether 128+N is there."""
    statuses, signal_row, in_table = set(), False, False
    for line in lines:
        if line.startswith(".TS"):
            in_table = True
        elif line.startswith(".TE"):
            in_table = False
        elif in_table and "\t" in line:
            cell = plain_roff(line.split("\t")[0]).strip()
            if re.fullmatch(r"\d+", cell):
                statuses.add(int(cell))
            elif cell.replace(" ", "") in ("128+N", "128+n"):
                signal_row = True
    return statuses, signal_row


# The code -----------------------------------------------------------------------------------------


def exit_statuses_in_code(header):
    match = re.search(r"enum class ExitStatus[^{]*\{(.*?)\};", header, re.S)
    if not match:
        problem("src/base/exit_status.hpp: no 'enum class ExitStatus'")
        return {}
    return {int(value): name for name, value in re.findall(r"(\w+)\s*=\s*(\d+)", match.group(1))}


# The completions ----------------------------------------------------------------------------------


def bash_options(text):
    match = re.search(r"_redlockrun_options='([^']*)'", text)
    if not match:
        problem("completions/redlockrun.bash: no _redlockrun_options list")
        return set()
    return set(match.group(1).split())


def zsh_options(text):
    code = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))
    return words_of(code)


def fish_options(text):
    found = set()
    for line in text.splitlines():
        if not line.startswith("complete "):
            continue
        tokens = shlex.split(line, comments=True)
        for flag, value in zip(tokens, tokens[1:]):
            if flag in ("-s", "--short-option"):
                found.add("-" + value)
            elif flag in ("-l", "--long-option", "-o", "--old-option"):
                found.add("--" + value if flag in ("-l", "--long-option") else "-" + value)
    return found


# --------------------------------------------------------------------------------------------------


# ACLs ---------------------------------------------------------------------------------------------


def commands_in_scripts(directory):
    """The Redis commands the lock's Lua scripts call, directly or through their helper that
    tolerates a key of another type."""
    commands = set()
    for script in sorted(directory.glob("*.lua")):
        commands |= {name.upper() for name in
                     re.findall(r"(?:redis\.p?call|call_unless_wrongtype)\(\s*'([A-Za-z]+)'",
                                script.read_text())}
    return commands


def commands_in_acl_paragraph(page):
    """The commands the man page lists after "as well as those the lock's scripts run"."""
    match = re.search(r"as well as those the lock's scripts run:\n(.*?)\n\.S[HS]", page, re.S)
    if not match:
        return None
    paragraph = plain_roff(match.group(1).split("\n.PP", 1)[0])
    return set(re.findall(r"\b[A-Z]{3,}\b", paragraph))


# Where the server comes from, highest first: one order in every document (README, man page, --help).
URL_PLACES = ["--url", "REDLOCKRUN_URL", "config files", "REDIS_URL", "redis://127.0.0.1:6379"]


def places_in_order(where, text, places):
    """The problem, if any, with the order `text` names `places` in (each at its first mention)."""
    text = " ".join(text.replace("$", "").split())
    positions = {place: text.find(place) for place in places}
    missing = [place for place, at in positions.items() if at < 0]
    if missing:
        problem(f"{where}: does not name {', '.join(missing)} where it says which server is used")
        return
    stated = sorted(places, key=positions.get)
    if stated != places:
        problem(f"{where}: names the server's places in the order {stated}, not {places}")


def check_url_precedence(help_text, entries, page, readme):
    url_help = [text for names, text in entries if "--url" in names]
    default = url_help[0].partition("default:")[2] if url_help else ""
    places_in_order("--help's --url", default, URL_PLACES[1:])
    man = re.search(r"^\.B Precedence\.\n(.*?)^\.RE$", page, re.S | re.M)
    if not man:
        problem("redlockrun.1: no Precedence paragraph (.B Precedence. and a list)")
    else:
        lines = [plain_roff(re.sub(r"^\.[A-Z]{1,2}\s+", "", l)) for l in man.group(1).splitlines()]
        places_in_order("redlockrun.1's Precedence", " ".join(lines), URL_PLACES)
    paragraph = re.search(r"^\*\*Precedence\.\*\*(.*?)(?:\n\n|\Z)", readme, re.S | re.M)
    if not paragraph:
        problem("README.md: no **Precedence.** paragraph")
    else:
        places_in_order("README.md's Precedence", paragraph.group(1), URL_PLACES)


# The README and docs/ ----------------------------------------------------------------------------

# "Under 250": the README is a short read; docs/ holds the rest. (It was 230 until the CI jobs'
# YAML and the one-minute demo came in.)
README_MAX_LINES = 249

# A long option in a document is redlockrun's unless the nearest program named before it, in the
# same code span, code line or line of prose, is another one (`cmake --install build --strip`).
PROGRAM = re.compile(r"(?<![\w-])(redlockrun|cmake|ctest|tests/faults/run|bench/run|redis-cli|"
                     r"scripts/test|scripts/install-deps)(?![\w-])")
LONG_OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9]*(?:-[a-z0-9]+)*)(-\*)?")
MARKDOWN_LINK = re.compile(r"(?<!!)\[([^\]]*)\]\(([^)\s]+)\)")


def markdown_units(text):
    """Yields (line number, text, is_code) for the prose lines of a Markdown document, with their
    code spans taken out, for each code span, and for each line of a code block."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.startswith("    ") or line.startswith("\t"):
            yield number, line, True
            continue
        for span in re.findall(r"`([^`]+)`", line):
            yield number, span, True
        yield number, re.sub(r"`[^`]+`", "", line), False


def github_slug(heading):
    """The anchor GitHub gives a heading: its text as shown, lower case, without punctuation but
    hyphens and underscores, spaces made hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "")
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def markdown_anchors(text):
    """Every anchor of a document's headings, numbered as GitHub numbers repeated ones (-1, -2)."""
    anchors, seen, fenced = set(), {}, False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if match and not fenced:
            slug = github_slug(match.group(1))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def check_links(path, text, source):
    where = path.relative_to(source)
    for number, unit, is_code in markdown_units(text):
        if is_code:
            continue
        for _, target in MARKDOWN_LINK.findall(unit):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # a URL, not a file of the repository
            file_part, _, anchor = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            if not linked.exists():
                problem(f"{where}:{number}: the link {target} leads to no file")
            elif anchor:
                if linked.suffix != ".md" or not linked.is_file():
                    problem(f"{where}:{number}: the link {target} has an anchor, but no .md file")
                elif anchor not in markdown_anchors(linked.read_text()):
                    problem(f"{where}:{number}: the link {target}: no heading #{anchor} there")


def check_long_options(path, text, source, options):
    where = path.relative_to(source)
    for number, unit, _ in markdown_units(text):
        programs = [(m.start(), m.group(1)) for m in PROGRAM.finditer(unit)]
        for match in LONG_OPTION.finditer(unit):
            before = [name for at, name in programs if at < match.start()]
            if before and before[-1] != "redlockrun":
                continue
            name, prefix = match.group(1), match.group(2)
            if prefix:
                known = any(option.startswith(name + "-") for option in options)
            else:
                known = name in options
            if not known:
                problem(f"{where}:{number}: {name}{prefix or ''} is not an option of redlockrun --help")


def check_acl_rule(page, called):
    """docs/lock.md's ACL SETUSER line must allow every command the lock's scripts call but SELECT
    (which the page adds for a database other than 0), and EVAL, EVALSHA and BLPOP."""
    rule = re.search(r"^\s*ACL SETUSER .*$", page, re.M)
    if not rule:
        problem("docs/lock.md: no ACL SETUSER line")
        return
    allowed = {name.upper() for name in re.findall(r"\+([a-z|]+)", rule.group(0))}
    for command in sorted((called | {"EVAL", "EVALSHA", "BLPOP"}) - {"SELECT"} - allowed):
        problem(f"docs/lock.md: the ACL SETUSER line lacks +{command.lower()}")


def check_markdown(source, options, called):
    readme = source / "README.md"
    lines = len(readme.read_text().splitlines())
    if lines > README_MAX_LINES:
        problem(f"README.md: {lines} lines, more than {README_MAX_LINES}: move details to docs/")
    documents = [readme] + sorted((source / "docs").glob("*.md"))
    for path in documents:
        text = path.read_text()
        check_links(path, text, source)
        check_long_options(path, text, source, options)
    lock_page = source / "docs/lock.md"
    if not lock_page.exists():
        problem("docs/lock.md is missing")
    else:
        check_acl_rule(lock_page.read_text(), called)


# The tested servers ------------------------------------------------------------------------------

# Every suite runs against Debian's redis-server; the compat label runs them against each server
# that tests/compat/build-servers builds, two tests per name in COMPAT_SERVERS.
DEBIAN_SERVER = "Redis 7.0 (Debian 12's redis-server)"


def compat_servers(source):
    """The servers of the compat label, as the man page names them: redis-6.0.20 is Redis 6.0.20."""
    cmake = (source / "tests/CMakeLists.txt").read_text()
    found = re.search(r"^set\(COMPAT_SERVERS ([^)]*)\)", cmake, re.M)
    if not found:
        problem("tests/CMakeLists.txt: no set(COMPAT_SERVERS ...)")
        return []
    names = []
    for server in found.group(1).split():
        name, _, version = server.partition("-")
        names.append(f"{name.capitalize()} {version}")
    return names


def check_tested_servers(page, source):
    """The man page's COMPATIBILITY lists, as its first bullets, exactly the servers tested."""
    section = re.search(r"^\.SH COMPATIBILITY\n(.*?)(?=^\.SH )", page, re.M | re.S)
    if not section:
        problem("redlockrun.1: no COMPATIBILITY section")
        return
    bullets = re.search(r"((?:^\.IP \\\(bu 2\n.*\n)+)", section.group(1), re.M)
    listed = re.findall(r"^\.IP \\\(bu 2\n(.*)$", bullets.group(1), re.M) if bullets else []
    tested = compat_servers(source) + [DEBIAN_SERVER]
    for server in sorted(set(tested) - set(listed)):
        problem(f"redlockrun.1: COMPATIBILITY does not list {server}, which the tests run against")
    for server in sorted(set(listed) - set(tested)):
        problem(f"redlockrun.1: COMPATIBILITY lists {server}, which no test runs against")


# The fault suite's report ------------------------------------------------------------------------

REPORT_ROW = re.compile(r"^\| ([a-z0-9-]+) \|")
REPORT_PROMISE = re.compile(r"^\*\*([a-z0-9-]+)\*\* — ")


def check_reliability_report(source):
    listing = subprocess.run([sys.executable, str(source / "tests/faults/run"), "--list"],
                             capture_output=True, text=True)
    if listing.returncode != 0:
        problem(f"tests/faults/run --list exited with {listing.returncode}: {listing.stderr.strip()}")
        return
    listed = [line.split(":", 1)[0] for line in listing.stdout.splitlines() if ":" in line]
    report = (source / "docs/reliability.md").read_text().splitlines()
    for what, pattern in (("table", REPORT_ROW), ("promises", REPORT_PROMISE)):
        named = [m.group(1) for m in map(pattern.match, report) if m and m.group(1) != "scenario"]
        for name in sorted(set(listed) - set(named)):
            problem(f"docs/reliability.md: its {what} lacks the scenario {name}: run "
                    "tests/faults/run --long to write the report again")
        for name in sorted(set(named) - set(listed)):
            problem(f"docs/reliability.md: its {what} names {name}, which tests/faults/run "
                    "--list does not list")
        for name in sorted({n for n in named if named.count(n) > 1}):
            problem(f"docs/reliability.md: its {what} names {name} more than once")


# The README's CI jobs ----------------------------------------------------------------------------

YAML_BLOCK = re.compile(r"^```yaml\n(.*?)^```", re.M | re.S)


def strings_in(value):
    """Every string in a parsed YAML document, keys and values."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings_in(key)
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def check_ci_examples(readme, options):
    """The README's CI jobs parse as YAML, and every option their redlockrun lines use is real."""
    import yaml  # python3-yaml (scripts/install-deps): read only here
    blocks = YAML_BLOCK.findall(readme)
    if len(blocks) < 2:
        problem(f"README.md: {len(blocks)} YAML CI examples, expected GitHub Actions' and GitLab's")
    used = 0
    for number, block in enumerate(blocks, 1):
        try:
            document = yaml.safe_load(block)
        except yaml.YAMLError as error:
            problem(f"README.md: CI example {number} is not YAML: {error}")
            continue
        for text in strings_in(document):
            for line in text.splitlines():
                words = line.split()
                if "redlockrun" not in words:
                    continue
                for word in words[words.index("redlockrun") + 1:]:
                    if word == "--" or not word.startswith("-"):
                        if word == "--":
                            break
                        continue
                    used += 1
                    if word.split("=")[0] not in options:
                        problem(f"README.md: CI example {number} uses {word}, which --help "
                                "does not list")
    if blocks and not used:
        problem("README.md: no redlockrun option found in the CI examples: the check saw nothing")


MAN_ORDER = ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "ENVIRONMENT", "FILES")


def check_man_order(page):
    """A reference's order: the page opens with these sections, in this order; the long topics
    come after them."""
    found = re.findall(r'^\.SH "?([^"\n]+)"?$', page, re.M)
    if tuple(found[:len(MAN_ORDER)]) != MAN_ORDER:
        problem(f"redlockrun.1: the sections open {', '.join(found[:len(MAN_ORDER)])}; "
                f"expected {', '.join(MAN_ORDER)}")


def check_help_alone(binary):
    """--help and --version exit 0 alone, and are a usage error (64) with anything else: a job
    written with redis-cli's -h HOST never exits 0 without running."""
    for argv, expected in ((["--help"], 0), (["-h"], 0), (["--version"], 0), (["-V"], 0),
                           (["-h", "127.0.0.1", "-k", "job", "--", "true"], 64),
                           (["-k", "job", "--help"], 64), (["-V", "-k", "job"], 64)):
        status = subprocess.run([binary, *argv], capture_output=True).returncode
        if status != expected:
            problem(f"redlockrun {' '.join(argv)} exited {status}, expected {expected}")


# The reports' verdicts and sources ---------------------------------------------------------------

def check_performance_report(source):
    """Every target in docs/performance.md passed (whether it comes from the src/ of HEAD:
    check_report_sources())."""
    text = (source / "docs/performance.md").read_text()
    targets = re.search(r"^## Targets for redlockrun\n(.*?)^## ", text, re.M | re.S)
    rows = [line for line in (targets.group(1) if targets else "").splitlines()
            if line.startswith("| ") and not line.startswith("| target ")]
    if not rows:
        problem("docs/performance.md: no targets table")
    for row in rows:
        if not row.rstrip().endswith("| pass |"):
            problem(f"docs/performance.md: a target that did not pass: {row}")


def _git(source, *arguments):
    return subprocess.run(["git", "-C", str(source), *arguments], capture_output=True, text=True)


def check_report_sources(source):
    """docs/performance.md and docs/reliability.md report on the src/ of HEAD: the commit each
    names is HEAD or before it, and no commit since has changed anything under src/. Run the
    benchmark (bench/run --build --update-docs) and the fault suite's long run
    (tests/faults/run --long) again after a change to src/. Outside a git checkout (a source
    archive) there is no history to compare with, and it says so."""
    if _git(source, "rev-parse", "--is-inside-work-tree").stdout.strip() != "true":
        print("note: not a git checkout: the reports' source commits are not compared with src/")
        return
    reports = {
        "docs/performance.md": r"^\| redlockrun \| redlockrun [^|]*, source ([0-9a-f]{7,40})\b([^|]*)\|",
        "docs/reliability.md": r"^- commit: ([0-9a-f]{7,40})\b(.*)$",
    }
    for name, pattern in reports.items():
        found = re.search(pattern, (source / name).read_text(), re.M)
        if not found:
            problem(f"{name}: names no source commit")
            continue
        commit, rest = found.group(1), found.group(2).strip()
        if rest:
            problem(f"{name}: its source was not a commit alone: {commit} {rest}")
        if _git(source, "merge-base", "--is-ancestor", commit, "HEAD").returncode != 0:
            problem(f"{name}: its source commit {commit} is not HEAD or before it")
            continue
        later = _git(source, "log", "--format=%h", f"{commit}..HEAD", "--", "src").stdout.split()
        if later:
            problem(f"{name}: src/ changed after its source commit {commit}, in "
                    f"{', '.join(later[:5])}{' ...' if len(later) > 5 else ''}: run it again")


def check_reliability_verdicts(source):
    """docs/reliability.md reports no unexplained overlap and no scenario but ok."""
    text = (source / "docs/reliability.md").read_text()
    found = re.search(r"unexplained overlaps: (\d+)", text)
    if not found:
        problem("docs/reliability.md: no 'unexplained overlaps: N' line")
    elif found.group(1) != "0":
        problem(f"docs/reliability.md: {found.group(1)} unexplained overlaps")
    for line in text.splitlines():
        if REPORT_ROW.match(line) and not line.startswith("| scenario "):
            if not line.rstrip().endswith("| ok |"):
                problem(f"docs/reliability.md: a scenario whose verdict is not ok: {line}")


def main():
    binary, source = sys.argv[1], Path(sys.argv[2])
    run = subprocess.run([binary, "--help"], capture_output=True, text=True)
    if run.returncode != 0:
        problem(f"redlockrun --help exited with {run.returncode}")
    help_text = run.stdout
    entries = list(help_entries(help_text))
    options = [name for names, _ in entries for name in names]
    # A parser that finds nothing would make every check below pass: refuse that.
    for must in ("-k", "--key", "--status", "--help"):
        if must not in options:
            problem(f"--help: could not find {must} among the options found ({' '.join(options)})")

    man_path = source / "man/redlockrun.1"
    page = man_path.read_text()
    sections = man_sections(page)
    for name in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "ENVIRONMENT",
                 "EXAMPLES", "NOTES", "SEE ALSO"):
        if name not in sections:
            problem(f"{man_path.name}: no {name} section")
    man_entries = list(man_option_entries(sections.get("OPTIONS", [])))
    documented = set()
    for tag, _ in man_entries:
        documented |= words_of(tag)
    for option in options:
        if option not in documented:
            problem(f"{man_path.name}: {option} is not documented in OPTIONS")

    # Defaults stated by --help must be the man page's.
    for names, description in entries:
        for default in re.findall(r"\(default ([^)\s,;]+)\)", description):
            bodies = [body for tag, body in man_entries if set(names) & words_of(tag)]
            if bodies and not any(re.search(rf"default {re.escape(default)}\b", b) for b in bodies):
                problem(f"{man_path.name}: {names[-1]} should say 'default {default}', as --help does")

    # Exit statuses.
    code = exit_statuses_in_code((source / "src/base/exit_status.hpp").read_text())
    man_statuses, signal_row = exit_statuses_in_man(sections.get("EXIT STATUS", []))
    for status in sorted(set(code) - man_statuses):
        problem(f"{man_path.name}: EXIT STATUS lacks {status} ({code[status]} in src/base/exit_status.hpp)")
    for status in sorted(man_statuses - set(code)):
        problem(f"{man_path.name}: EXIT STATUS lists {status}, which src/base/exit_status.hpp does not have")
    if not signal_row:
        problem(f"{man_path.name}: EXIT STATUS lacks the 128+N row")
    help_statuses = exit_statuses_in_help(help_text)
    for status in sorted(set(code) - {0} - help_statuses):
        problem(f"--help: the exit status list lacks {status} ({code[status]})")
    for status in sorted(help_statuses - set(code)):
        problem(f"--help: the exit status list has {status}, which src/base/exit_status.hpp does not have")

    # Version.
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.split()
    th = re.search(r'^\.TH\s+\S+\s+\S+\s+\S+\s+"redlockrun ([^"]+)"', page, re.M)
    if not th:
        problem(f'{man_path.name}: the .TH line has no "redlockrun VERSION"')
    elif not version or th.group(1) != version[-1]:
        problem(f"{man_path.name}: .TH says version {th.group(1)}, the binary {' '.join(version)}")

    # The RPM spec's version, and that of its latest changelog entry.
    spec_path = source / "packaging/redlockrun.spec"
    spec = spec_path.read_text()
    spec_version = re.search(r"^Version:\s*(\S+)", spec, re.M)
    if not spec_version or not version or spec_version.group(1) != version[-1]:
        found = spec_version.group(1) if spec_version else "nothing"
        problem(f"{spec_path.name}: Version is {found}, the binary's {' '.join(version)}")
    latest = re.search(r"^%changelog\s*\n\*[^\n]*- (\S+)-\d+\s*$", spec, re.M)
    if spec_version and (not latest or latest.group(1) != spec_version.group(1)):
        problem(f"{spec_path.name}: the latest %changelog entry is not for {spec_version.group(1)}")

    # The commands an ACL user needs for the scripts.
    called = commands_in_scripts(source / "src/lock/scripts")
    listed = commands_in_acl_paragraph(page)
    if not called:
        problem("src/lock/scripts: found no redis.call in the scripts")
    if listed is None:
        problem(f"{man_path.name}: no paragraph listing the commands the lock's scripts run")
    else:
        for command in sorted(called - listed):
            problem(f"{man_path.name}: the scripts call {command}, which the ACL list lacks")
        for command in sorted(listed - called):
            problem(f"{man_path.name}: the ACL list names {command}, which no script calls")

    check_url_precedence(help_text, entries, page, (source / "README.md").read_text())
    check_tested_servers(page, source)
    check_markdown(source, set(options), called)
    check_reliability_report(source)
    check_reliability_verdicts(source)
    check_performance_report(source)
    check_report_sources(source)
    check_ci_examples((source / "README.md").read_text(), set(options))
    check_man_order(page)
    check_help_alone(binary)

    # Completions.
    completions = {
        "completions/redlockrun.bash": bash_options,
        "completions/_redlockrun": zsh_options,
        "completions/redlockrun.fish": fish_options,
    }
    for path, extract in completions.items():
        offered = extract((source / path).read_text())
        for option in options:
            if option not in offered:
                problem(f"{path}: {option} is missing")

    for line in problems:
        print(f"not ok: {line}")
    if problems:
        print(f"{len(problems)} problem(s)")
        return 1
    print(f"ok: {len(options)} options and {len(code)} exit statuses agree across --help, "
          "the man page, the completions and src/base/exit_status.hpp")
    return 0


if __name__ == "__main__":
    sys.exit(main())
