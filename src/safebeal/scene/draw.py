"""A picture of a scene for people: rooms as boxes, what stands in each and what lies on or in it.

Rooms are laid out on a grid in id order (a procedural home's own layout: its doors join grid neighbours);
doors are drawn on the wall two neighbouring rooms share, or as a dashed line between rooms that are not
neighbours on the grid. Inside a room: each piece of furniture with the objects on (``on``) or in (``in``) it,
and states worth seeing (OPEN, ON, DIRTY). matplotlib is imported only here.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Tuple

from safebeal.errors import SafebealError

#: categories left out of the picture (structure), unless ``all_objects``
HIDDEN = ("Walls", "Ceiling", "Floor", "Floors", "Windows", "Doors", "Lamps", "Rooms", "Characters")
SHOWN_STATES = ("OPEN", "ON", "DIRTY", "PLUGGED_OUT")
#: the picture's size is capped: at most this many text lines in a room (the rest counted in one line) ...
MAX_ROOM_LINES = 60
#: ... and at most this many rooms (more is refused): 6 x 6 rooms of 60 lines is about 2,900 x 5,300 pixels, where a
#: 100,000-object scene drawn whole ran for minutes and then failed at 7.9 GB
MAX_DRAWN_ROOMS = 36


class DrawError(SafebealError):
    """A scene too large to draw."""


def room_contents(data: Mapping, all_objects: bool = False) -> Tuple[Dict[int, str], Dict[int, List[str]], List[Tuple[int, int]]]:
    """(room id -> class, room id -> text lines, doors as (room, room) pairs) of a ``{"nodes","edges"}`` graph."""
    nodes = {n["id"]: n for n in data["nodes"]}
    rooms = {i: n["class_name"] for i, n in sorted(nodes.items()) if n.get("category") == "Rooms"}
    room_of: Dict[int, int] = {}
    holder: Dict[int, Tuple[str, int]] = {}
    between: Dict[int, List[int]] = {}
    for e in data["edges"]:
        a, rel, b = e["from_id"], e["relation_type"].upper(), e["to_id"]
        if rel == "INSIDE" and b in rooms:
            room_of.setdefault(a, b)
        elif rel in ("ON", "INSIDE") and b in nodes and b not in rooms and a not in holder:
            holder[a] = ("on" if rel == "ON" else "in", b)
        elif rel == "BETWEEN" and b in rooms:
            between.setdefault(a, []).append(b)

    def label(n) -> str:
        st = [s.lower() for s in n.get("states", []) if s in SHOWN_STATES]
        return f"{n['class_name']} ({n['id']})" + (f" [{', '.join(st)}]" if st else "")

    def shown(n) -> bool:
        return all_objects or n.get("category") not in HIDDEN

    lines: Dict[int, List[str]] = {r: [] for r in rooms}
    kids: Dict[int, List[int]] = {}
    for i, (_rel, h) in holder.items():
        kids.setdefault(h, []).append(i)
    for i, n in sorted(nodes.items()):
        r = room_of.get(i)
        if r is None or i in rooms:
            continue
        if n.get("class_name") == "character":
            lines[r].insert(0, "* the agent starts here")
            continue
        if i in holder and holder[i][1] in nodes and nodes[holder[i][1]].get("category") not in ("Floor", "Floors"):
            continue  # listed under what holds it
        if not shown(n):
            continue
        lines[r].append(label(n))
        for k in sorted(kids.get(i, [])):
            if shown(nodes[k]) or all_objects:
                lines[r].append(f"   {holder[k][0]} {label(nodes[k])}")
            for k2 in sorted(kids.get(k, [])):
                lines[r].append(f"      {holder[k2][0]} {label(nodes[k2])}")
    doors = sorted({tuple(sorted(rs[:2])) for rs in between.values() if len(rs) >= 2})
    return rooms, lines, doors


def draw_scene(data: Mapping, out: Path | str, title: Optional[str] = None, all_objects: bool = False) -> Path:
    """Write a PNG of the scene to ``out``: at most :data:`MAX_ROOM_LINES` lines a room; over
    :data:`MAX_DRAWN_ROOMS` rooms is a :class:`DrawError`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    rooms, lines, doors = room_contents(data, all_objects)
    if len(rooms) > MAX_DRAWN_ROOMS:
        raise DrawError(f"{title or 'scene'}: {len(rooms):,} rooms are too many to draw (at most {MAX_DRAWN_ROOMS}); "
                        "list them with `safebeal scene show` without --png")
    for r, ls in lines.items():
        if len(ls) > MAX_ROOM_LINES:
            lines[r] = ls[: MAX_ROOM_LINES - 1] + [f"... and {len(ls) - MAX_ROOM_LINES + 1:,} more lines (not drawn)"]
    ids = list(rooms)
    n = max(1, len(ids))
    cols = max(1, math.ceil(math.sqrt(n)))
    nrows = math.ceil(n / cols)
    line_h = 0.122  # inches per text line (6.5 pt monospace, spacing 1.25)
    width = 4.3
    row_h = [max([len(lines[ids[i]]) for i in range(r * cols, min(n, (r + 1) * cols))] + [4]) * line_h + 0.6
             for r in range(nrows)]
    fig_w, fig_h = cols * width + 0.4, sum(row_h) + 0.8
    fig = plt.figure(figsize=(fig_w, fig_h), dpi=110)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, fig_w)
    ax.set_ylim(0, fig_h)
    ax.axis("off")
    pos: Dict[int, Tuple[float, float, float, float]] = {}
    y_top = fig_h - 0.6
    for r in range(nrows):
        for c in range(cols):
            k = r * cols + c
            if k >= n:
                break
            x0, y0, w, h = 0.2 + c * width, y_top - row_h[r], width, row_h[r]
            pos[ids[k]] = (x0, y0, w, h)
            ax.add_patch(Rectangle((x0, y0), w, h, fill=True, facecolor="#f7f4ec", edgecolor="#444", linewidth=2))
            ax.text(x0 + 0.1, y0 + h - 0.12, f"{rooms[ids[k]]} ({ids[k]})", fontsize=10, fontweight="bold", va="top")
            ax.text(x0 + 0.1, y0 + h - 0.42, "\n".join(lines[ids[k]]), fontsize=6.5, va="top", family="monospace",
                    linespacing=1.25)
        y_top -= row_h[r]
    for a, b in doors:
        if a not in pos or b not in pos:
            continue
        ia, ib = ids.index(a), ids.index(b)
        (xa, ya, wa, ha), (xb, yb, wb, hb) = pos[a], pos[b]
        if ia // cols == ib // cols and abs(ia - ib) == 1:  # side by side: a door in the shared wall
            x = max(xa, xb)
            ym = max(ya, yb) + min(ha, hb) / 2
            ax.plot([x, x], [ym - 0.25, ym + 0.25], color="#b5651d", linewidth=6, solid_capstyle="butt")
        elif ia % cols == ib % cols and abs(ia - ib) == cols:  # one above the other
            y = max(ya, yb)
            xm = xa + wa / 2
            ax.plot([xm - 0.25, xm + 0.25], [y, y], color="#b5651d", linewidth=6, solid_capstyle="butt")
        else:
            ax.plot([xa + wa / 2, xb + wb / 2], [ya + ha / 2, yb + hb / 2], color="#b5651d", linestyle="--", linewidth=1)
    ax.text(0.2, fig_h - 0.2, (title or "scene") + f": {len(rooms)} rooms, {len(data['nodes'])} nodes, {len(data['edges'])} edges"
            "   (brown: doors; 'on'/'in': placed on or in the piece above)", fontsize=9, va="top")
    import io

    from safebeal.atomic import atomic_write

    out = Path(out)
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png")
    finally:
        plt.close(fig)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DrawError(f"--png {out}: cannot write: {exc.strerror or exc}") from None
    return atomic_write(out, buf.getvalue(), error=lambda m: DrawError("--png " + m))  # the previous picture stays whole
