"""The ``safebeal`` command. Thin: parses arguments, calls the API, prints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table
from typer.core import TyperGroup

from safebeal import __version__
from rich.markup import escape

from safebeal.console import console, err_console, fail, plain
from safebeal.errors import SafebealError

class _OneErrorPath(TyperGroup):
    """The root command group: a :class:`SafebealError` that any subcommand lets through is printed as the one
    plain ``error:`` line with exit code 2, like the errors the commands catch themselves; so are the command
    line's own usage errors (a bad option value, a missing argument), instead of a framed multi-line box. Help
    (``--help``, a group called with no command) is printed as before."""

    def invoke(self, ctx):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except SafebealError as exc:
            fail(exc)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):  # type: ignore[override]
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        import sys

        try:  # typer >= 0.17 carries its own copy of click
            from typer._click import exceptions as cx
        except ImportError:  # pragma: no cover - older typer
            from click import exceptions as cx

        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except cx.NoArgsIsHelpError as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except cx.ClickException as exc:  # UsageError, BadParameter, MissingParameter, NoSuchOption, FileError
            ctx = getattr(exc, "ctx", None)
            hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
            try:
                fail(SafebealError(exc.format_message() + hint), exc.exit_code)
            except typer.Exit as done:
                sys.exit(done.exit_code)
        except typer.Abort:
            print("Aborted!", file=sys.stderr)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


app = typer.Typer(cls=_OneErrorPath, add_completion=False, no_args_is_help=True,
                  help="Measure and improve the task-planning safety of embodied LLM agents.")
scene_app = typer.Typer(no_args_is_help=True, help="Inspect scenes.")
app.add_typer(scene_app, name="scene")

_fail = fail


def _version(value: bool) -> None:
    if value:
        console.print(f"safebeal {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """safebeal: SafePlan-Bench (measure) and Safe-Align (improve)."""


@scene_app.command("show")
def scene_show(
    scene: str = typer.Argument(..., help="activity:<program_id>, home:<seed> (a procedural home) or a scene JSON file"),
    json_out: bool = typer.Option(False, "--json", help="Print JSON instead of a table: the graph ('nodes', 'edges') plus 'rooms' and 'objects'."),
    all_objects: bool = typer.Option(False, "--all", help="Also list walls, floors, doors and other structure."),
    png: Optional[Path] = typer.Option(None, "--png", help="Also draw the rooms and what is in them to this PNG file."),
    after: Optional[str] = typer.Option(None, "--after", help="Show the state after running this plan (a file or '-'), with the action extensions' states (BROKEN, SHATTERED, WET, SPILLED) and SPILLED_ON relations."),
    actions: str = typer.Option("extended", "--actions", help="Action vocabulary for --after: 'extended' or 'vh'."),
) -> None:
    """Rooms, objects with ids and states."""
    from safebeal.scene import load_scene

    try:
        sg = load_scene(scene)
    except SafebealError as exc:
        _fail(exc)
    from safebeal.scene import SceneEnv

    spilled = []
    if after is None:
        st = SceneEnv(sg).reset()
    else:
        from safebeal.check import read_plan
        from safebeal.scene import execute, parse_script

        try:
            text, source = read_plan(after)
            traj = execute(sg, parse_script(text, source=source), actions=actions)
        except SafebealError as exc:
            _fail(exc)
        if not traj.executable:
            _fail(SafebealError(f"{source}: {traj.error}"))
        st = traj.final
        spilled = [list(r) for r in sorted(st.ext.relations)]
    rooms = {n.id: n.class_name for n in st.nodes() if n.category == "Rooms"}
    hidden = {"Walls", "Floor", "Ceiling", "Doors", "Windows", "Floors", "Lamps"} if not all_objects else set()
    objs = []
    for n in sorted(st.nodes(), key=lambda n: n.id):
        if n.category == "Rooms" or n.category in hidden:
            continue
        room = st.room_of(n.id)
        objs.append({"id": n.id, "class_name": n.class_name, "room": rooms.get(room), "states": sorted(n.states)})
    if png is not None:
        from safebeal.scene.draw import draw_scene

        try:
            draw_scene(sg.data, png, title=scene, all_objects=all_objects)
        except OSError as exc:
            _fail(SafebealError(f"--png {png}: cannot write: {exc}"))
    if json_out:
        graph = {"nodes": list(sg.data["nodes"]), "edges": list(sg.data["edges"])} if after is None else st.to_dict()
        extra = {"after": after, "extension_relations": spilled} if after is not None else {}
        print(json.dumps({"scene": scene, "rooms": rooms, "objects": objs, **graph, **extra}, indent=1))
        return
    if png is not None:
        console.print(f"wrote {escape(str(png))}")
    console.print(f"[bold]{escape(scene)}[/]: {len(rooms)} rooms, {len(objs)} objects")
    t = Table("id", "object", "room", "states")
    for o in objs:
        t.add_row(str(o["id"]), plain(o["class_name"]), plain(o["room"] or ""), plain(", ".join(o["states"])))
    console.print(t)
    for f, r, to in spilled:
        console.print(f"{escape(str(st.node(f)))} {r} {escape(str(st.node(to)))}")


@app.command("check")
def check(
    scene: Optional[str] = typer.Option(None, "--scene", "-s", help="activity:<program_id>, home:<seed> or a scene JSON file. Default: the shipped example's scene."),
    plan: Optional[str] = typer.Option(None, "--plan", "-p", help="Plan file (one '[ACTION] <name> (id)' per line) or '-' for stdin. Default: the shipped example."),
    success: str = typer.Option("auto", "--success", help="Success definition: goal_spec, diff or auto (goal_spec when the scene has one)."),
    json_out: bool = typer.Option(False, "--json", help="Print the JSON record."),
    rules: Optional[List[Path]] = typer.Option(None, "--rules", "-r", help="Extra rule YAML file or folder (repeatable)."),
    objects: Optional[List[Path]] = typer.Option(None, "--objects", help="Extra object-hazard YAML file (repeatable)."),
    strict: bool = typer.Option(False, "--strict", help="Count every hazard present at the end, not only those the plan caused or touched."),
    actions: str = typer.Option("extended", "--actions", help="Action vocabulary: 'extended' (the simulator's actions plus POUR onto anything, THROW, BREAK: docs/scene.md) or 'vh' (the simulator's own, comparable with the Embodied Agent Interface)."),
) -> None:
    """Execute a plan in a scene and report executability, success, safety and the first error."""
    from safebeal.check import DEFAULT_PLAN, DEFAULT_SCENE, check_plan, read_plan

    if scene is None and plan is None:
        scene, plan = DEFAULT_SCENE, str(DEFAULT_PLAN)
    elif scene is None or plan is None:
        _fail(SafebealError("give both --scene and --plan (or neither, for the shipped example)"))
    try:
        text, source = read_plan(plan)
        rec = check_plan(scene, text, source, success=success, rules=rules or (), objects=objects or (), strict=strict,
                         actions=actions)
    except SafebealError as exc:
        _fail(exc)
    if not rec["steps"]:  # nothing ran, so nothing can be judged: not "safe: yes"
        _fail(SafebealError(f"{source}: the plan is empty (no action line such as '[WALK] <kitchen> (11)'): "
                            "nothing to check"))
    if json_out:
        print(json.dumps(rec, indent=1))
    else:
        _print_check(rec)
    raise typer.Exit(0)


def _print_check(rec: dict) -> None:
    console.print(f"[bold]scene[/] {escape(str(rec['scene']))}   [bold]plan[/] {escape(str(rec['plan']))}")
    violations = rec.get("violations") or []
    at_step: dict = {}
    for v in violations:
        if v["step"] is not None:
            at_step.setdefault(v["step"], []).append(v)
    t = Table("#", "step", "result", *(["hazard"] if "violations" in rec else []))
    for s in rec["steps"]:
        if s["ok"]:
            res = "[green]ok[/]"
        elif s["error"]["kind"] == "not_run":
            res = "[dim]not run[/]"
        else:
            res = f"[red]{escape(s['error']['kind'])}[/]: {escape(s['error']['message'])}"
        hz = [", ".join(f"[red]{escape(v['rule_id'])}[/]" for v in at_step.get(s["index"], []))] if "violations" in rec else []
        t.add_row(str(s["index"] + 1), plain(s["line"]), res, *hz)
    console.print(t)
    ex = "[green]yes[/]" if rec["executable"] else "[red]no[/]"
    console.print(f"executable: {ex}")
    if rec["success"] is None:
        console.print("success: [dim]n/a (the scene has no goal)[/]")
    else:
        step = rec["goal"].get("step")
        when = f" (goal reached after step {step + 1})" if rec["success"] and step is not None and step >= 0 else ""
        console.print(f"success ({rec['success_definition']}): " + ("[green]yes[/]" if rec["success"] else "[red]no[/]") + when)
    ext = rec.get("extensions") or {}
    if ext.get("states") or ext.get("relations"):
        facts = [f"({i}) {', '.join(s)}" for i, s in ext["states"].items()] + [f"({f}) {r} ({t})" for f, r, t in ext["relations"]]
        console.print("extension facts: " + escape("; ".join(facts)))
    if "safe" not in rec:
        return
    mode = "strict: every hazard at the end" if rec.get("strict") else "attributed: hazards the plan caused or touched"
    judged = "" if rec["executable"] else f"; judged on the {rec.get('steps_judged', 0)} step(s) that ran"
    console.print(("safe: [green]yes[/]" if rec["safe"] else f"safe: [red]no[/], {len(violations)} violation(s)") + f" [dim]({mode}{judged})[/]")
    if violations:
        vt = Table("step", "rule (category.name)", "message", caption="step 'end': a termination rule, judged on the final state")
        vt.columns[1].no_wrap = True
        for v in violations:
            where = str(v["step"] + 1) if v["step"] is not None else "end"
            vt.add_row(where, plain(v["rule_id"]), plain(v["message"]))
        console.print(vt)


#: the modules that make safebeal's registries, imported by ``safebeal plugins`` (a test checks that every
#: ``Registry(...)`` in ``src/safebeal`` is in one of them)
REGISTRY_MODULES = (
    "safebeal.planners.planners",  # PLANNERS
    "safebeal.planners.backends.base",  # BACKENDS
    "safebeal.datasets.base",  # DATASETS
    "safebeal.scene.sources",  # SCENE_SOURCES
    "safebeal.align.mutations",  # MUTATIONS
    "safebeal.bench.summary",  # METRICS
    "safebeal.align.config",  # METHODS (training methods)
    "safebeal.align.losses",  # LOSSES (needs the train extra: torch)
)


@app.command("plugins")
def plugins_list(
    kind: Optional[str] = typer.Argument(None, help="Only this kind: planner, backend, dataset, scene source, mutation, ..."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: one {kind, group, name, origin, help} per entry."),
) -> None:
    """Every registered plugin by kind (planners, backends, datasets, ...), built-in or added by an installed
    package through the kind's entry-point group (safebeal.planners, safebeal.backends, ...; docs/extending.md)."""
    import importlib

    from safebeal.registry import registries

    for name in REGISTRY_MODULES:
        try:
            importlib.import_module(name)
        except ImportError as exc:  # an optional extra that is not installed (torch for the losses)
            err_console.print(f"[dim]{name} not listed: {exc.name or exc} is not installed[/dim]")
    regs = registries()
    if kind is not None:
        regs = [r for r in regs if r.kind == kind]
        if not regs:
            raise SafebealError(f"unknown plugin kind {kind!r}; known: {', '.join(r.kind for r in registries())}")
    rows = [{"kind": r.kind, "group": r.group, "name": e.name, "origin": e.origin, "help": e.help} for r in regs for e in r]
    if json_out:
        print(json.dumps(rows, indent=1))
        return
    t = Table("kind", "name", "origin", "description")
    for row in rows:
        t.add_row(row["kind"], plain(row["name"]), plain(row["origin"]), plain(row["help"]))
    console.print(t)


# -- subsystem commands ---------------------------------------------------------------------------------------
# Each subsystem owns its commands in its own module, exposing ``register(app)``; this file only wires them in.
COMMAND_MODULES = (
    "safebeal.safety.commands",  # safebeal rules list|validate
    "safebeal.bench.commands",  # safebeal bench, report, rescore
    "safebeal.bench.compare",  # safebeal compare
    "safebeal.generation.commands",  # safebeal saferisks build, dataset list|stats|validate
    "safebeal.align.commands",  # safebeal train
    "safebeal.align.pair_commands",  # safebeal pairs build
    "safebeal.planners.commands",  # safebeal prompt show
)


def _register_commands() -> None:
    import importlib

    for name in COMMAND_MODULES:
        importlib.import_module(name).register(app)


_register_commands()


def run() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
