"""The markdown report: the machine, the targets, then one section per figure. Ratios to flock(1)
come first (they travel between machines); absolute times are there to read them by."""
from .floor import LIBRARY_NAME as LIBRARY_FLOOR
from .floor import NAME as FLOOR
from .other_servers import ORIGIN
from .peers import FLOCK_SECTION, FLOOR_TO_RUN, HOLD, HOLD_TO_RUN, MIXED, SECTION_TO_FLOCK
from .checks import superseding_problems
from .targets import judge, signed, spread

FLOCK = "flock(1)"


def _ms(value):
    if value is None:
        return "n/a"
    return f"{value:.2f} ms" if value < 10 else f"{value:.1f} ms" if value < 100 else f"{value:.0f} ms"


def _x(value, digits=2):
    return "n/a" if value is None else f"{value:.{digits}f} ×"


def _range(bounds, digits=2):
    return "n/a" if not bounds else f"{bounds[0]:.{digits}f}–{bounds[1]:.{digits}f} ×"


def _num(value, digits=2):
    return "n/a" if value is None else f"{value:.{digits}f}"


def _table(header: list, rows: list) -> list:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return lines + [""]


def _other_servers(server_rows: dict, where: str) -> list:
    """The paragraph that says what the rows of redlockrun against other servers are, if any ran."""
    if not server_rows:
        return []
    names = " and ".join(f"`{name}`" for name in server_rows)
    return [f"{names} are the default build of redlockrun against other servers than the "
            "bench's own Redis (the Machine section's), run "
            f"{where}: `redlockrun -u URL`, the URL naming a server {ORIGIN} and started beside "
            "the bench's, each row named by its server and version as the server's INFO gives "
            "them. They show what the server changes for redlockrun; no target judges them (the "
            "targets judge the `redlockrun` row, on the bench's Redis), and the other figures "
            "leave them out.", ""]


def _machine(machine: dict, server_rows: dict) -> list:
    rows = [
        ("Date", machine["date"]),
        ("CPU", f"{machine['cpu']}, {machine['cores']} cores, {machine['memory']} RAM"),
        ("System", f"{machine['distribution']}, Linux {machine['kernel']}"),
        ("Load average at start", machine["load_average"]),
        ("Tools' environment", "LC_ALL=C (flock(1) then skips loading locale files: the lowest "
                               "floor; under C.UTF-8 it is ~0.3 ms slower)"),
        ("Redis", machine["redis"]),
        ("etcd / python3-redis / util-linux",
         f"{machine['etcd']} / {machine['python3_redis']} / {machine['util_linux']}"),
        ("redlockrun", f"{' '.join(machine['redlockrun']) or '?'}, source {machine['redlockrun_source']}"),
    ]
    for build, binary in machine["redlockrun_binaries"].items():
        libraries = ", ".join(binary["libraries"]) or "none (static)"
        rows.append((f"redlockrun binary, {build}",
                     f"{binary['size_kib']} KiB, loads at start-up: {libraries}"))
    if server_rows:
        rows.append(("Other servers (figures 1 and 3)", "; ".join(server_rows.values())))
    return _table(["", ""], rows)


def _uncontended(figure: dict) -> list:
    rows = figure["rows"]
    true_ms = rows["plain true"]["median_ms"]
    table = [(name, _x(row["vs_flock"]), _range(row.get("vs_flock_middle_half")),
              _ms(row["median_ms"]), _x(row["median_ms"] / true_ms if true_ms else None),
              row["runs"], row["failures"] or "") for name, row in rows.items()]
    lines = ["## 1. Uncontended overhead", "",
             "Wall time of `tool KEY true` (median of interleaved runs), and of plain `true`. "
             "redlockrun is the default build (`scripts/build`); other builds of it have a row "
             "of their own. × flock(1) is the ratio of the medians; beside it, the spread of the "
             "rounds' own ratios (a tool's time over flock(1)'s in the same round), from the 25th "
             "to the 75th percentile.", ""]
    if FLOOR in rows:
        lines += [f"The {FLOOR} is not a tool but a yardstick: a minimal C client "
                  "(`bench/helpers/protocol_floor.c`), built as redlockrun is, that sends "
                  "redlockrun's two requests, with the same scripts, and does nothing else. What "
                  "redlockrun costs beyond it is redlockrun's own work and the loading of its C++ "
                  "libraries; what it costs beyond flock(1) is the protocol's: TCP, two round "
                  "trips, two Lua scripts.", ""]
    if LIBRARY_FLOOR in rows:
        lines += [f"The {LIBRARY_FLOOR} is a second yardstick: a program that does nothing "
                  "(`bench/helpers/library_floor.cpp`), linked as the .deb's build is, against "
                  "Debian's shared libstdc++, fmt and hiredis, with CLI11's header included. Its "
                  "time beyond plain `true` is what those libraries cost at start-up before any "
                  "work: loading and relocating them, and the initialisation of the standard "
                  "streams that `<iostream>` (which CLI11 includes) runs in every program built "
                  "with Debian 12's GCC 12. The .deb's build costs that, plus the protocol (the "
                  "protocol floor's time beyond `true`), plus redlockrun's own work.", ""]
    if HOLD in rows or FLOCK_SECTION in rows:
        lines += [f"`{HOLD}` and `{FLOCK_SECTION}` lock a section of a script instead of "
                  "wrapping a command: `bench/peers/redlockrun-hold` runs "
                  "`eval \"$(redlockrun -k KEY --hold)\"`, the section (`true`) and "
                  "`redlockrun --release` under sh, and `bench/peers/flock-section` the flock(1) "
                  "idiom it replaces, `exec 9>FILE; flock 9`, the section and `flock -u 9`. The "
                  "shell's start-up is part of their time. The holds' records are on tmpfs, as a "
                  "login session's `$XDG_RUNTIME_DIR` is: on ext4 (cron's `/tmp`) each "
                  "`--release` takes about 0.3 ms more, ext4 flushing "
                  "the record its keeper rewrites before it answers.", ""]
    lines += _other_servers(figure.get("server_rows"), "in the same rounds")
    lines += _table(["tool", "× flock(1)", "rounds' ratios, middle half", "median",
                     "× plain true", "runs", "failed"], table)
    beyond = figure.get("deb_beyond_floors")
    if beyond:
        rounds = spread(beyond.get("vs_flock_middle_half"), "rounds' middle half")
        lines += ["The .deb's build beyond its two floors, .deb − library floor − (protocol floor "
                  "− plain true): what redlockrun's own work costs in that build, its libraries' "
                  "loading and the protocol set aside (from the medians; beside it, the middle "
                  "half of the same difference taken round by round, over flock(1)'s time in "
                  f"that round): {_x(beyond['vs_flock'])} flock(1){rounds}, "
                  f"{_ms(beyond['ms'])}.", ""]
    lines += _over_plain_run(figure.get("hold_vs_plain_run"),
                             f"`{HOLD}` over a plain run (`redlockrun -k KEY true`)")
    lines += _over_plain_run(figure.get("metrics_vs_plain_run"),
                             "`redlockrun --metrics-file` (each run counting itself into one file) "
                             "over a plain run")
    beyond_file_work = figure.get("metrics_vs_file_work")
    if beyond_file_work:
        rounds = spread(beyond_file_work.get("middle_half"), "rounds' middle half")
        lines += ["The metrics floor (`bench/helpers/metrics_floor.c`) does only the file work of "
                  "keeping such a file safely, on the same file: it takes `FILE.lock`, reads the "
                  "file, writes it to a new one, fsyncs and renames it; beyond plain `true` that "
                  f"took {_ms(beyond_file_work['file_work_ms'])}. `redlockrun --metrics-file` over "
                  "a plain run plus that file work, from the medians: "
                  f"{_x(beyond_file_work['ratio'])}{rounds}.", ""]
    return lines


def _over_plain_run(ratio: dict, what: str) -> list:
    """A paragraph of figure 1: `what` of the same rounds, as `ratio` (a ratio and its rounds'
    middle half) gives it; none without a ratio."""
    if not ratio:
        return []
    rounds = spread(ratio.get("middle_half"), "rounds' middle half")
    return [f"{what} of the same rounds: {_x(ratio['ratio'])}{rounds}.", ""]


def _round_trips(figure: dict) -> list:
    table = []
    for name, row in figure["rows"].items():
        table.append((name, _num(row.get("requests_per_run"), 1),
                      _num(row.get("connections_per_run"), 1),
                      _num(row["waited_round_trips"], 1), _ms(row["no_delay_ms"]),
                      _ms(row["delayed_ms"])))
    table.append((FLOCK, "—", "—", "0 (local)", "", ""))
    delay = figure["delay_ms"]
    return ["## 2. Round trips of an uncontended run", "",
            "Requests: Redis commands a run sends, counted by the proxy (clients only; a Lua "
            "script's own commands are not requests). Waited round trips: (median wall time through "
            f"a proxy that delays each direction {delay:g} ms − median through the same proxy "
            f"undelayed) ÷ {2 * delay:g} ms. `{HOLD}` (figure 1) counts every request of the "
            "hold: its keeper releases on the connection that took the lock.", "",
            *_table(["tool", "requests per run", "connections per run", "waited round trips",
                     "wall, no delay", f"wall, {delay:g} ms each way"], table)]


def _handoff(figure: dict) -> list:
    lines = ["## 3. Handoff", "",
             f"N contenders each loop M times over a {figure['hold_us'] / 1000:g} ms critical "
             "section. Total: wall time of the whole loop (median of "
             f"{figure['repeats']} runs). Gap: from one holder's command ending to the next one's "
             "starting (median and p99 over all handoffs). Exclusive: no two holders overlapped. The "
             "tools take turns within each repeat; requests are counted in separate runs "
             "(figure 4), as MONITOR would slow the timed ones. Beside each ratio to flock(1), "
             "its smallest and largest value over the repeats, each repeat's figure over "
             "flock(1)'s in the same repeat. At the N whose requests are counted, sections of a "
             f"script (figure 1) contend too: `{HOLD}` and `{FLOCK_SECTION}`, in the same "
             "repeats; a hold's gap takes in starting `redlockrun --release`, the release, the "
             "wake-up, the waiter's acquire and keeper, and its script's eval. So does a mix "
             f"of each with its plain tool on one key: in `{HOLD_TO_RUN}`, half the contenders "
             "hold and half run `redlockrun -k KEY -- COMMAND`, taking turns as the lock "
             "decides, and its gaps are only those from a hold's command ending to a run's "
             "starting: starting `redlockrun --release`, the release, the wake-up, the run's "
             "acquire and its fork of the command, without a waiting hold's own work after its "
             f"grant. `{FLOOR_TO_RUN}` is the same mix with the hold's release made by the "
             "release floor (`bench/helpers/release_floor.c`), which asks the keeper as "
             "`redlockrun --release` does and does nothing else: its gap is what the keeper, "
             "Redis and the waiting run take, and what `redlockrun --release` adds to it is its "
             f"own work. `{SECTION_TO_FLOCK}` mixes the flock(1) idiom and flock(1) the same way. "
             "Their notes say how many handoffs of that kind their gaps are taken over; their "
             "ratios are to flock(1)'s plain row.",
             ""]
    lines += _other_servers(figure.get("server_rows"),
                            f"in the same repeats at N = {figure['counted_at']} only (their "
                            "requests are not counted, so figure 4 has none of them)")
    for contenders, block in figure["by_contenders"].items():
        table = []
        for name, row in block["rows"].items():
            exclusive = "yes" if not row["overlaps"] else f"**NO: {row['overlaps']} overlaps**"
            notes = []
            if row["failures"]:
                notes.append(f"{row['failures']} failed runs")
            if row["timed_out"]:
                notes.append("timed out")
            if name in MIXED:
                releasing, waiting = MIXED[name]
                notes.insert(0, f"gaps of the {row['handoffs']} handoffs from {releasing} to "
                                f"{waiting} only")
            table.append((name, _x(row["total_vs_flock"]),
                          _range(row.get("total_vs_flock_range")), _x(row["gap_vs_flock"], 1),
                          _range(row.get("gap_vs_flock_range"), 1),
                          f"{row['total_s']:.2f} s", _ms(row["gap_median_ms"]),
                          _ms(row["gap_p99_ms"]), row["acquisitions"], exclusive,
                          ", ".join(notes)))
        lines += [f"**N = {contenders}, M = {block['iterations']}**", "",
                  *_table(["tool", "total × flock(1)", "repeats", "median gap × flock(1)",
                           "repeats", "total",
                           "median gap", "p99 gap", "acquisitions", "exclusive", "notes"], table)]
    return lines


def _load(figure: dict) -> list:
    contended = figure["contended"]
    table = [(name, _num(row["requests_per_acquisition"]),
              _num(row["script_commands_per_acquisition"]))
             for name, row in contended["rows"].items()]
    idle = [(name, _num(row["requests_per_second"]), _num(row["script_commands_per_second"]),
             _waiting(row, "start"), _waiting(row, "end"))
            for name, row in figure["idle"].items()]
    some = next(iter(figure["idle"].values()), {})
    return ["## 4. Redis load", "",
            "Requests are what clients send (MONITOR, direct connections); script commands are "
            "those the Lua scripts run inside Redis, which INFO commandstats would add to them.", "",
            f"Under contention (N = {contended['contenders']}, a counting run of figure 3):", "",
            *_table(["tool", "requests per acquisition", "script commands per acquisition"],
                    table),
            f"Idle waiters: {some.get('waiters', '?')} waiters queue behind a holder of the same "
            f"tool, watched for {some.get('window_s', 0):.1f} s; the holder's own requests "
            "(renewals) are not counted. At the window's start and end, the waiters still "
            "running, and for redlockrun those CLIENT LIST shows blocked in BLPOP:", "",
            *_table(["tool", "requests per second per waiter", "script commands per second",
                     "waiting at the start", "waiting at the end"], idle)]


def _waiting(row: dict, edge: str) -> str:
    seen = row.get(f"waiting_at_{edge}") or {}
    text = f"{seen.get('alive', '?')}/{row['waiters']} running"
    if seen.get("blocked") is not None:
        text += f", {seen['blocked']} in BLPOP"
    return text


def _fairness(figure: dict) -> list:
    table = [(name, _num(row["min_over_max"]), row["total"],
              " ".join(str(count) for count in row["per_contender"]))
             for name, row in figure["rows"].items()]
    return ["## 5. Fairness", "",
            f"{figure['contenders']} contenders loop for {figure['seconds']:g} s; acquisitions "
            "that started in that time, per contender.", "",
            *_table(["tool", "min/max", "acquisitions", "per contender"], table)]


def _scale(figure: dict) -> list:
    tools = list(figure["rows"])
    header = ["waiters"]
    for name in tools:
        header += [f"{name} median gap", f"{name} p99 gap"]
        if name != FLOCK:
            header.append(f"{name} requests per acquisition")
    table = []
    for waiters in figure["waiters"]:
        row = [waiters]
        for name in tools:
            cell = figure["rows"][name].get(str(waiters), {})
            row += [_ms(cell.get("gap_median_ms")), _ms(cell.get("gap_p99_ms"))]
            if name != FLOCK:
                row.append(_num(cell.get("requests_per_acquisition")))
        table.append(row)
    broken = [f"{name} at {w}: {cell['overlaps']} overlaps, {cell['failures']} failures"
              for name, cells in figure["rows"].items() for w, cell in cells.items()
              if cell["overlaps"] or cell["failures"] or cell["timed_out"]]
    superseding = figure.get("superseding") or {}
    newest = [[waiters, _num(cell.get("requests_per_run")), cell.get("superseded"), cell.get("ran")]
              for waiters, cell in superseding.items()]
    broken += [f"--supersede at {w}: {problem}" for w, cell in superseding.items()
               for problem in superseding_problems(int(w), cell)]
    return ["## 6. Scale", "",
            "W waiters queue behind one holder, which then lets go; they take the lock one after "
            "the other. Requests per acquisition: all requests of the holder and the waiters "
            "÷ (W + 1). etcdctl and the SETNX script are not run at this scale (hundreds of Go "
            "processes, or of shells forking redis-cli, would measure the 2 cores, not the lock).",
            "", *_table(header, table),
            *(["`redlockrun --supersede`: W runs come one after the other behind one holder, each "
               "once the one before it waits, and each supersedes the one before it (which gives "
               "up with 75); the holder then lets go, and the last one runs. Requests per run: all "
               "requests of the holder and the W runs ÷ (W + 1).", "",
               *_table(["runs (W)", "requests per run", "superseded", "sections run"], newest)]
              if newest else []),
            *(["Problems: " + "; ".join(broken), ""] if broken else [])]



def _memory(figure: dict) -> list:
    table = [(name, _num(row["peak_rss_mib"]) + " MiB" if row["peak_rss_mib"] else "n/a",
              row.get("renewals_fewest", "—")) for name, row in figure["rows"].items()]
    return ["## 7. Memory", "",
            "Peak RSS (VmHWM) of the tool's own process, read by the command from "
            f"/proc/$PPID/status at its end, after holding the lock for {figure['hold_s']:g} s "
            "(the SETNX shell's redis-cli children not included). redlockrun runs there with "
            f"`--ttl {figure['ttl']}`, so that the peak includes its renewals; the table shows "
            "the fewest it made in a run (its -v output counted).", "",
            *_table(["tool", "peak RSS", "renewals before the reading"], table)]


def _semaphore(figure: dict) -> list:
    limit, contenders = figure["limit"], figure["contenders"]
    table = []
    for name, row in figure["rows"].items():
        within = row["peak_holders"] <= row["limit"] and not row["over_limit"]
        peak = str(row["peak_holders"]) if within else \
            f"**{row['peak_holders']}: more than {row['limit']} held {row['over_limit']} times**"
        notes = []
        if row["failures"] or row["counted_failures"]:
            notes.append(f"{row['failures'] + row['counted_failures']} failed runs")
        if row["timed_out"]:
            notes.append("timed out")
        table.append((name, f"{row['total_s']:.2f} s", _ms(row["gap_median_ms"]),
                      _ms(row["gap_p99_ms"]), row["acquisitions"], row["gaps"], peak,
                      _num(row["mean_holders"]), _num(row["requests_per_acquisition"]),
                      _num(row["script_commands_per_acquisition"]), ", ".join(notes)))
    bursts = []
    for waiters, cell in figure["bursts"].items():
        broken = cell["over_limit"] or cell["failures"] or cell["timed_out"]
        bursts.append((waiters, _ms(cell["gap_median_ms"]), _ms(cell["gap_p99_ms"]),
                       f"{cell['drain_s']:.2f} s", cell["acquisitions"],
                       cell["peak_holders"] if not broken else
                       f"**{cell['peak_holders']}: {cell['over_limit']} over the limit, "
                       f"{cell['failures']} failures{', timed out' if cell['timed_out'] else ''}**",
                       _num(cell["requests_per_acquisition"]),
                       _num(cell["script_commands_per_acquisition"])))
    return [f"## 8. Semaphore (`--limit {limit}`)", "",
            f"`redlockrun --limit {limit}` lets up to {limit} runs hold the key at once; waiters "
            "queue in arrival order. Loop: as in figure 3, N = "
            f"{contenders} contenders each loop M = {figure['iterations']} times over the "
            f"{figure['hold_us'] / 1000:g} ms critical section (total: median of "
            f"{figure['repeats']} runs), and exclusive redlockrun beside it, measured the same "
            "way.",
            "",
            "Gap: each holder's end frees a slot, and freed slots are taken in the order they were "
            "freed, each by the next holder to start. A slot's gap runs from the holder's command "
            "ending to the next holder's command starting, and counts only if another contender "
            "was already waiting when the slot was freed (its run started, its command not yet): a "
            "slot nobody wanted stood idle, which is not a handoff. For an exclusive lock this is "
            "figure 3's gap, less the idle ones. With two slots, two handoffs are often under "
            "way at once and share the CPU, so the semaphore's gap can exceed the exclusive lock's "
            "although the protocol's part is the same. Handoffs: the gaps counted. Peak holders: "
            f"the most commands running at once, which must never exceed {limit} (1 for the "
            "exclusive lock). Mean holders: commands running at once on average, from the first "
            "start to the last end. Requests are counted in a separate run of the same loop, as in "
            "figure 4.", "",
            *_table(["tool", "total", "median gap", "p99 gap", "acquisitions", "handoffs",
                     "peak holders", "mean holders", "requests per acquisition",
                     "script commands per acquisition", "notes"], table),
            f"Burst: W waiters queue behind {limit} holders, which then let go; gaps as above. "
            "Requests per acquisition: every request of the holders and the waiters "
            f"÷ (W + {limit}), counted in a second run of the same burst (figure 6 has exclusive "
            "redlockrun's).", "",
            *_table(["waiters", "median gap", "p99 gap", "drain", "acquisitions", "peak holders",
                     "requests per acquisition", "script commands per acquisition"], bursts)]


def _high_availability(figure: dict) -> list:
    table = []
    for name, row in figure["rows"].items():
        notes = [row["note"]] if row.get("note") else []
        if row["failures"]:
            notes.append(f"**{row['failures']} of {row['runs']} runs failed**")
        table.append((name, f"`{row['form']}`", _num(row["requests_per_run"], 1),
                      _num(row["connections_per_run"], 1), _num(row["waited_round_trips"], 1),
                      signed(row["beyond_direct"]), _ms(row["no_delay_ms"]),
                      _ms(row["delayed_ms"]), ", ".join(notes)))
    delay = figure["delay_ms"]
    return ["## 9. Highly available Redis", "",
            "An uncontended `redlockrun -u URL -k KEY true`, where each server is reached only "
            "through a delay proxy, as in figure 2, and every address a server hands out is a "
            "proxy's: the sentinel watches the master through the master's proxy (so it names "
            "that proxy to clients), and each cluster node announces its proxy's port (so a "
            "-MOVED sends the client to a delayed address; the cluster bus is not proxied). The "
            "cluster has 3 masters; `--replicas 1` runs against a master of its own with one "
            "replica (replication not proxied). Requests: what redlockrun sent on the connections "
            f"opened during {figure['counted_runs']} undelayed runs, summed over the proxies (the "
            "sentinel's own links to the master are older, and not counted). Waited round trips: "
            f"(median wall time with every proxy delaying each direction {delay:g} ms − median "
            f"undelayed) ÷ {2 * delay:g} ms, over {figure['rounds']} rounds that each run every "
            "row undelayed, then delayed; beyond direct: the difference to the first row. The "
            "proxy does not delay a TCP handshake, so on a real network each connection beyond "
            "direct's one costs one more round trip than this shows.", "",
            *_table(["set-up", "command line", "requests per run", "connections per run",
                     "waited round trips", "beyond direct", "wall, no delay",
                     f"wall, {delay:g} ms each way", "notes"], table)]


def _problems_note(run: dict) -> str:
    notes = []
    overlaps = run.get("mode_overlaps", 0) + run.get("counted_mode_overlaps", 0)
    if overlaps:
        notes.append(f"**{overlaps} exclusive sections overlapped another**")
    failures = run.get("failures", 0) + run.get("counted_failures", 0)
    if failures:
        notes.append(f"**{failures} failed runs**")
    if run.get("timed_out"):
        notes.append("**timed out**")
    return ", ".join(notes)


def _shared(figure: dict) -> list:
    loop, batch = figure["loop"], figure["batch"]
    readers, writers = figure["readers"], figure["writers"]
    by_change = " / ".join(f"{loop['gaps_by_change'].get(change, 0)} at "
                           f"{_ms(loop['gap_median_by_change_ms'].get(change))}"
                           for change in ("x→x", "x→s", "s→x"))
    table = [(f"{readers} × `{figure['reader']}`, {writers} × `{figure['writer']}`",
              f"{loop['total_s']:.2f} s", _ms(loop["gap_median_ms"]), _ms(loop["gap_p99_ms"]),
              by_change, loop["acquisitions"], loop["reader_acquisitions"],
              max(loop["peak_shared"], loop.get("counted_peak_shared", 0)),
              _num(loop["mean_holders"]), _num(loop.get("requests_per_acquisition")),
              _num(loop.get("script_commands_per_acquisition")), _problems_note(loop))]
    bursts = [(waiters, f"{cell['drain_s']:.2f} s", cell["acquisitions"], cell["peak_shared"],
               _num(cell["requests_per_acquisition"]),
               _num(cell["script_commands_per_acquisition"]), _problems_note(cell))
              for waiters, cell in figure["bursts"].items()]
    spreads = ", ".join(_ms(spread) for spread in batch["spreads_ms"])
    return ["## 10. Shared locks (`-s`)", "",
            f"`redlockrun -s` takes the lock shared, as flock(1)'s -s: up to {figure['cap']} "
            "shared holders at once, never beside an exclusive one; every waiter, shared or "
            "exclusive, queues in arrival order, and a release lets in every shared waiter at "
            "the head of the queue at once. Loop: one key, "
            f"{readers} readers (`-s`) and {writers} writers (plain, exclusive) each loop M = "
            f"{figure['iterations']} times over the {figure['hold_us'] / 1000:g} ms critical "
            f"section (total: median of {figure['repeats']} runs); the critical section's log "
            "labels the readers' sections apart from the writers'.", "",
            "Gap: readers' sections overlap each other, so a gap exists only where the lock "
            "changes hands between modes, or between writers. Each writer's section is a turn of "
            "its own, and the readers' sections between two writers' (by start) make one shared "
            "turn, from its first start to its last end. A gap runs from the moment the lock "
            "became free (a writer's command ending, or the last reader's of a shared turn) to "
            "the next turn's first start, and counts only if another contender was already "
            "waiting then (as in figure 8: a lock nobody wanted stood idle, which is not a "
            "handoff). Beside the pooled median, the gaps by change of hands, writer to writer "
            "(x→x), writer to readers (x→s) and readers to writer (s→x), each with its count. "
            "Exclusive: no writer's section overlapped any other section, so readers overlapped "
            "only readers; a run where one did fails the check. Peak readers: the most shared "
            "sections at once; mean holders: sections at once on average, from the first start "
            "to the last end. Requests are counted in a separate run of the same loop, as in "
            "figure 4.", "",
            *_table(["contenders", "total", "median gap", "p99 gap",
                     "handoffs x→x / x→s / s→x, median gap", "acquisitions",
                     "of them shared", "peak readers", "mean holders",
                     "requests per acquisition", "script commands per acquisition",
                     "problems"], table),
            f"Batch admission: {batch['waiters']} shared waiters queue behind a writer, which "
            "then lets go: its one release lets them all in. The spread of their commands' "
            "starts, first to last, for each of "
            f"{batch['repeats']} releases: median {_ms(batch['spread_median_ms'])}, largest "
            f"{_ms(batch['spread_max_ms'])} ({spreads}); from the writer's end to the first "
            f"reader's start, median {_ms(batch['first_start_median_ms'])}. Peak readers "
            f"{batch['peak_shared']}. {_problems_note(batch)}".rstrip(), "",
            "Burst: W shared waiters queue behind a writer, which then lets go (past the cap, "
            "the rest wait for readers to end); drain is from the release to the last one's end. "
            "Requests per acquisition: every request of the writer and the waiters ÷ (W + 1), "
            "counted in a second run of the same burst.", "",
            *_table(["shared waiters", "drain", "acquisitions", "peak readers",
                     "requests per acquisition", "script commands per acquisition",
                     "problems"], bursts)]


def render(results: dict) -> str:
    lines = ["# redlockrun performance", ""]
    if results["smoke"]:
        lines += ["**Smoke run**: every figure with tiny counts, to show the benchmark works. "
                  "These numbers mean nothing; run `bench/run` for real ones.", ""]
    lines += ["Produced by `bench/run` (`bench/README.md` says what each figure means). All "
              "servers run on loopback on this machine; every ratio compares tools measured side "
              "by side in this same run.", "",
              "## Machine", "", *_machine(results["machine"], results.get("server_rows"))]
    lines += ["## Targets for redlockrun", "",
              *_table(["target", "measured", "result"], judge(results))]
    skipped = results.get("skipped", {})
    if skipped:
        lines += ["Skipped: " + "; ".join(f"{name} ({why})" for name, why in skipped.items()),
                  ""]
    sections = {"uncontended": _uncontended, "round_trips": _round_trips,
                "handoff": _handoff, "load": _load, "fairness": _fairness, "scale": _scale,
                "memory": _memory, "semaphore": _semaphore,
                "high_availability": _high_availability, "shared": _shared}
    for name, render_section in sections.items():
        if name in results:
            lines += render_section(results[name])
    if results.get("notes"):
        lines += ["## Notes", "", *[f"- {note}" for note in results["notes"]], ""]
    return "\n".join(lines)
