"""The sample browser of ``report.html``: every sample of a run, embedded as JSON and shown by a small script.

It works from ``file://`` with no server and no network: the data are in the page (a ``<script
type="application/json">`` block), the script and style are inline, nothing is fetched. The page state lives in
the URL's fragment (``#planner=...&outcome=unsafe&sample=12``), so the leaderboard's rows and the plots' bars
link into filtered samples, and a sample or a comparison can be shared as a link.

:func:`sample_rows` turns episodes into the rows the page shows; :func:`viewer_html` is the page's browser part.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Optional, Sequence
from urllib.parse import quote

from safebeal.bench.metrics import generation_failed, is_rouge_only, no_plan_kind, outcome, parse_failed

#: the outcome filter's choices: (value, label); a sample matches every choice that is true of it
OUTCOME_FILTERS = (("safe", "safe"), ("unsafe", "unsafe (a violation)"), ("not_judged", "not judged (no plan run)"),
                   ("success", "success"), ("failure", "failure"),
                   ("safe_success", "safe success (SSR)"), ("parse_error", "parse error"),
                   ("generation_error", "generation error"), ("not_executable", "not executable"),
                   # saferisks-explicit's samples only (bench.requests)
                   ("hazardous_request", "hazardous request"), ("harmless_twin", "harmless twin"),
                   ("refused", "refused"), ("complied_unsafely", "complied unsafely"))


def sample_tags(ep: Dict[str, Any], request: Any = ...) -> List[str]:
    """The outcome filter values true of one sample (see :data:`OUTCOME_FILTERS`). A sample scored by Rouge-L only
    (a WorldModel task: no scene, nothing simulated) is "not judged": its ``safe`` is only the record's default.
    ``request``: the sample's request view, where the caller has computed it (saferisks-explicit)."""
    if is_rouge_only(ep):
        return ["not_judged"] + (["generation_error"] if generation_failed(ep) else
                                 ["parse_error"] if parse_failed(ep) else [])
    if ep.get("safe"):
        tags = ["safe"]
    else:  # SafeR counts both as not safe; only a judged plan with a violation is unsafe
        tags = ["unsafe" if ep.get("violations") else "not_judged"]
    if ep.get("success") is True:
        tags.append("success")
    elif ep.get("success") is False:
        tags.append("failure")
    if ep.get("safe") and ep.get("success") and ep.get("executable"):
        tags.append("safe_success")
    if generation_failed(ep):
        tags.append("generation_error")
    elif parse_failed(ep):
        tags.append("parse_error")
    if not ep.get("executable"):
        tags.append("not_executable")
    req = _request_view(ep) if request is ... else request  # sample_rows passes the view it shows
    if req is not None:
        tags.append("harmless_twin" if req.get("kind") == "twin" else "hazardous_request")
        if req["outcome"] in ("refused", "complied_unsafely"):
            tags.append(req["outcome"])
    return tags


def sample_rows(episodes: Iterable[Any], task_info: Optional[Dict[str, Dict[str, Any]]] = None) -> List[Dict[str, Any]]:
    """One row per episode, in leaderboard-independent order (task id, then planner): what the page shows and
    filters on. ``task_info`` maps a task id to its ``categories`` (the dataset's categories of the task)."""
    task_info = task_info or {}
    rows = []
    eps = [e if isinstance(e, dict) else e.model_dump() for e in episodes]
    eps.sort(key=lambda e: (e.get("task_id", ""), e.get("planner", "")))
    for i, e in enumerate(eps):
        viol = e.get("violations") or []
        req = _request_view(e)
        info = task_info.get(e.get("task_id"), {})
        rows.append({
            "i": i,
            "planner": e.get("planner"),
            "task_id": e.get("task_id"),
            "dataset": e.get("dataset"),
            "instruction": e.get("instruction") or "",
            "categories": list(info.get("categories") or []),
            "hazards": sorted({v.get("category") for v in viol if v.get("category")}),
            "rules": sorted({v.get("rule_id") for v in viol if v.get("rule_id")}),
            "tags": sample_tags(e, req),
            "outcome": "not simulated (Rouge-L only)" if is_rouge_only(e) else outcome(e),
            "no_plan": no_plan_kind(e),
            "safe": e.get("safe"), "success": e.get("success"), "executable": e.get("executable"),
            "prompt": e.get("prompt"),
            "raw_output": e.get("raw_output"),
            "generation_error": e.get("generation_error"),
            "parse_error": e.get("parse_error"),
            "script": e.get("script") or [],
            "steps": e.get("steps") or [],
            "error": e.get("error"),
            "goal_step": e.get("goal_step"),
            "violations": viol,
            "rouge_l": e.get("rouge_l"),
            "extras": e.get("extras") or None,  # each planner's own record (shield, clmasp, llm-planner)
            "turns": compact_turns(e.get("turns")),
            "agent": e.get("agent"),
            # saferisks-explicit: the request's kind and its outcome (refused, complied safely or unsafely, failed)
            "request": req,
        })
    return rows


def _request_view(e: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    from safebeal.bench.requests import refusal_signal, request_outcome

    r = e.get("request")
    if not isinstance(r, dict):
        return None
    signal = refusal_signal(e)
    return {**r, "outcome": request_outcome(e, signal), "signal": signal}


#: a turn's prompt line this long, the same as in the first turn (the action vocabulary), is shown once
SAME_LINE_CHARS = 200


def compact_turns(turns: Optional[List[Dict[str, Any]]]) -> Optional[List[Dict[str, Any]]]:
    """An agent's turns for the page: after the first turn, each long prompt line that is the same as in the first
    turn's prompt (the action vocabulary, a long description) is shown as ``(as in turn 1)``, so that a run of
    long episodes does not embed the vocabulary once per turn. samples.jsonl keeps every prompt whole."""
    if not turns:
        return turns
    first = {ln for ln in str(turns[0].get("prompt") or "").splitlines() if len(ln) >= SAME_LINE_CHARS}
    out = [turns[0]]
    for t in turns[1:]:
        p = t.get("prompt")
        if isinstance(p, str) and first:
            p = "\n".join("(as in turn 1)" if ln in first else ln for ln in p.splitlines())
        out.append({**t, "prompt": p})
    return out


def filter_link(**filters: str) -> str:
    """The fragment that opens the browser with these filters, e.g. ``#planner=replay%3Agpt-4o&outcome=unsafe``."""
    return "#" + "&".join(f"{k}={quote(str(v), safe='')}" for k, v in filters.items() if v)


def _json_for_script(data: Any) -> str:
    """JSON safe inside a ``<script>`` element (no ``</``, no ``<!--``; U+2028/9 escaped)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def viewer_html(rows: Sequence[Dict[str, Any]], order: Sequence[str], tasks: Dict[str, Dict[str, Any]]) -> str:
    """The sample browser: filters, the sample list, the sample view and the compare view, with its data."""
    data = {"samples": list(rows), "order": list(order), "tasks": tasks,
            "outcomes": [list(o) for o in OUTCOME_FILTERS]}
    return (f'<section id="browser"><h2>Samples</h2>\n{_CONTROLS}\n'
            f'<div id="layout"><div id="list-wrap"><p id="count"></p><table id="samples"><thead><tr><th>task</th>'
            f'<th>planner</th><th>instruction</th><th>outcome</th><th>violations</th></tr></thead><tbody></tbody>'
            f'</table></div><div id="detail" hidden></div></div></section>\n'
            f'<script type="application/json" id="sample-data">{_json_for_script(data)}</script>\n'
            f'<script>{_SCRIPT}</script>')


VIEWER_CSS = """
#controls{display:flex;flex-wrap:wrap;gap:.5em 1em;align-items:end;margin:.5em 0;padding:.5em;background:#f6f6f6;border:1px solid #ddd}
#controls label{display:flex;flex-direction:column;font-size:.8em}
#controls select,#controls input{font-size:1em}
#layout{display:flex;gap:1em;align-items:flex-start}
#list-wrap{flex:1 1 45%;max-height:80vh;overflow:auto}
#detail{flex:1 1 55%;max-height:80vh;overflow:auto;border:1px solid #ccc;padding:.5em 1em;background:#fff}
#samples{width:100%;font-size:.85em}
#samples td{text-align:left;vertical-align:top}
#samples tbody tr{cursor:pointer}
#samples tbody tr:hover{background:#eef}
#samples tbody tr.open{background:#dde}
.tag{display:inline-block;padding:0 .4em;margin:0 .2em .1em 0;border-radius:3px;font-size:.8em;background:#ddd}
.tag.safe,.tag.success,.tag.safe_success{background:#cfc}
.tag.unsafe{background:#fcc}.tag.failure,.tag.not_executable{background:#fec}
.tag.parse_error,.tag.generation_error{background:#f9c}.tag.not_judged{background:#eee;color:#666}
pre{white-space:pre-wrap;word-break:break-word;background:#f8f8f8;padding:.4em;border:1px solid #eee;font-size:.85em}
ol.steps{padding-left:2.5em;font-family:monospace;font-size:.85em}
ol.steps li{padding:.1em .3em}
li.failed{background:#fec}li.violating{background:#fcc}li.goal{outline:2px solid #4a4}li.notrun{color:#999}
.viol{display:block;font-family:sans-serif;color:#900;margin-left:1em}
.rule{font-family:monospace;font-weight:bold}
.thought{display:block;font-family:sans-serif;color:#555;margin-left:1em}
.goalmark{display:block;font-family:sans-serif;color:#060;margin-left:1em}
#compare{display:flex;gap:.5em;overflow-x:auto}
#layout.comparing #list-wrap{display:none}#layout.comparing #detail{flex:1 1 100%}
#compare .col{flex:0 0 22em;border:1px solid #ddd;padding:.3em}
details.observation{margin:1em 0}details.observation summary{font-weight:bold;cursor:pointer}
"""

_CONTROLS = """<div id="controls">
<label>planner<select id="f-planner"><option value="">all</option></select></label>
<label>dataset category<select id="f-category"><option value="">all</option></select></label>
<label>hazard category<select id="f-hazard"><option value="">all</option></select></label>
<label>rule<select id="f-rule"><option value="">all</option></select></label>
<label>outcome<select id="f-outcome"><option value="">all</option></select></label>
<label>search<input id="f-q" type="search" placeholder="task id, instruction, output, rule..."></label>
<button id="f-clear" type="button">clear</button>
</div>"""

_SCRIPT = r"""
(function(){
const D = JSON.parse(document.getElementById('sample-data').textContent);
const S = D.samples, rank = {};
D.order.forEach((p, i) => rank[p] = i);
const $ = id => document.getElementById(id);
const F = {planner: $('f-planner'), category: $('f-category'), hazard: $('f-hazard'), rule: $('f-rule'), outcome: $('f-outcome'), q: $('f-q')};
function el(tag, attrs, ...kids){
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) { if (v !== null && v !== undefined && v !== false) e.setAttribute(k, v === true ? '' : v); }
  for (const k of kids.flat()) { if (k === null || k === undefined || k === false) continue; e.append(k instanceof Node ? k : String(k)); }
  return e;
}
function fill(sel, values, labels){
  for (const v of values) sel.append(el('option', {value: v}, labels ? labels[v] : v));
}
const uniq = f => [...new Set(S.flatMap(f))].sort();
fill(F.planner, [...D.order, ...uniq(s => [s.planner]).filter(p => !(p in rank))]);
fill(F.category, uniq(s => s.categories));
fill(F.hazard, uniq(s => s.hazards));
fill(F.rule, uniq(s => s.rules));
const outLabels = Object.fromEntries(D.outcomes);
fill(F.outcome, D.outcomes.map(o => o[0]), outLabels);
S.forEach(s => s._text = [s.task_id, s.planner, s.instruction, s.raw_output || '', s.rules.join(' '),
  (s.violations || []).map(v => v.message).join(' '), s.generation_error || ''].join('\n').toLowerCase());
function state(){
  const st = {};
  for (const [k, e] of Object.entries(F)) if (e.value) st[k] = e.value;
  return st;
}
function matches(s, st){
  if (st.planner && s.planner !== st.planner) return false;
  if (st.category && !s.categories.includes(st.category)) return false;
  if (st.hazard && !s.hazards.includes(st.hazard)) return false;
  if (st.rule && !s.rules.includes(st.rule)) return false;
  if (st.outcome && !s.tags.includes(st.outcome)) return false;
  if (st.q && !s._text.includes(st.q.toLowerCase())) return false;
  return true;
}
const tbody = document.querySelector('#samples tbody');
let current = null, compareTask = null;
function renderList(){
  const st = state();
  const shown = S.filter(s => matches(s, st));
  $('count').textContent = shown.length + ' of ' + S.length + ' samples';
  tbody.replaceChildren(...shown.map(s => {
    const tr = el('tr', {'data-i': s.i, 'data-task': s.task_id, 'data-planner': s.planner, 'class': s.i === current ? 'open' : null},
      el('td', {}, el('a', {href: '#', 'class': 'task-id'}, s.task_id)),
      el('td', {}, s.planner.replace('replay:', '')),
      el('td', {}, s.instruction.length > 80 ? s.instruction.slice(0, 80) + '\u2026' : s.instruction),
      el('td', {}, s.tags.filter(t => t !== 'not_executable' || !s.tags.includes('parse_error')).map(t => el('span', {'class': 'tag ' + t}, outLabels[t] || t))),
      el('td', {}, s.violations.length ? String(s.violations.length) : ''));
    tr.addEventListener('click', ev => { ev.preventDefault(); open(s.i); });
    return tr;
  }));
}
function section(title, ...kids){ return [el('h4', {}, title), ...kids]; }
function stepsView(s){
  const byStep = {};
  const term = [];
  for (const v of s.violations) { if (v.step === null || v.step === undefined) term.push(v); else (byStep[v.step] = byStep[v.step] || []).push(v); }
  const ran = s.steps.length;
  const lines = s.steps.length ? s.steps : [];
  const firstFail = lines.findIndex(st => !st.ok);
  const items = lines.map((st, k) => {
    const vs = byStep[st.index] || [];
    const notrun = firstFail >= 0 && k > firstFail;  // the simulator stops at its first failing step
    const cls = [notrun ? 'notrun' : (st.ok ? '' : 'failed'), vs.length ? 'violating' : '', s.goal_step === st.index ? 'goal' : ''].join(' ').trim();
    const err = !st.error ? 'failed' : (typeof st.error === 'string' ? st.error : (st.error.message || st.error.kind || JSON.stringify(st.error)));
    return el('li', {value: st.index + 1, 'class': cls || null, 'data-step': st.index},
      st.line, st.ok ? ' \u2713' : (notrun ? ' (not run)' : ' \u2717 ' + err),
      s.goal_step === st.index ? el('span', {'class': 'goalmark'}, '\u2605 goal reached after this step') : null,
      vs.map(v => el('span', {'class': 'viol'}, '\u26a0 ', el('span', {'class': 'rule'}, v.rule_id), ' (' + v.kind + ', ' + v.category + '): ' + v.message)));
  });
  for (let k = ran; k < s.script.length; k++) items.push(el('li', {value: k + 1, 'class': 'notrun'}, s.script[k], ' (not run)'));
  const out = [];
  out.push(...section('Parsed script, each step\'s result', items.length ? el('ol', {'class': 'steps'}, items) : el('p', {}, s.parse_error ? 'no script: the output did not parse' : 'no script')));
  if (s.goal_step === -1) out.push(el('p', {'class': 'goalmark'}, '\u2605 the goal held before the first step'));
  else if (s.goal_step === null || s.goal_step === undefined) out.push(el('p', {}, s.success === null ? 'no goal check (Rouge-L only)' : 'the goal was never reached'));
  if (s.error) out.push(el('p', {}, 'execution stopped: ' + (s.error.message || s.error.kind)));
  out.push(...section('Termination violations (final state)', term.length ? el('ul', {'class': 'term'}, term.map(v =>
    el('li', {'class': 'viol'}, el('span', {'class': 'rule'}, v.rule_id), ' (' + v.category + '): ' + v.message))) : el('p', {}, 'none')));
  return out;
}
function turnsView(s){  // a step-by-step agent's turns: what it answered, what ran, what went wrong
  if (!s.turns) return [];
  const a = s.agent || {};
  const items = s.turns.map(t => {
    const err = t.error ? (t.error.message || t.error.kind || '') : '';
    const cls = [t.result === 'failed' || t.result === 'blocked' || t.result === 'generation_error' ? 'failed' : '',
      (t.violations || []).length ? 'violating' : ''].join(' ').trim();
    return el('li', {value: t.turn, 'class': cls || null, 'data-turn': t.turn},
      t.action || '(no action)', ' → ' + (t.result || '') + (err ? ': ' + err : ''),
      t.thought ? el('span', {'class': 'thought'}, 'thought: ' + t.thought) : null,
      t.shield ? el('span', {'class': 'viol'}, 'shield (' + t.shield.verdict + '): ' + (t.shield.steps || []).join(', ')) : null,
      (t.violations || []).map(v => el('span', {'class': 'viol'}, '\u26a0 ', el('span', {'class': 'rule'}, v.rule_id), ' (' + v.category + '): ' + v.message)),
      el('details', {}, el('summary', {}, 'prompt and raw output'), el('pre', {}, t.prompt || ''), el('pre', {'class': 'raw'}, t.output === null || t.output === undefined ? '(none)' : t.output)));
  });
  const why = a.stop ? 'stopped: ' + a.stop + (a.refusal ? ' (refusal signal: ' + a.refusal.signal + (a.refusal.reason ? ', ' + a.refusal.reason : '') + ')' : '') : '';
  return section('Turns (' + (a.style || 'agent') + ', step by step)', el('p', {}, why), el('ol', {'class': 'steps turns'}, items));
}
function promptView(s){
  const t = D.tasks[s.task_id] || {};
  const out = [];
  if (s.prompt && s.prompt.length) {
    out.push(el('details', {'class': 'observation'}, el('summary', {}, 'Observation: the prompt messages (' + s.prompt.length + ')'),
      s.prompt.map(m => [el('b', {}, m.role), el('pre', {}, m.content)])));
  } else {
    out.push(el('details', {'class': 'observation'}, el('summary', {}, 'Observation: no prompt recorded (a replayed output); the objects the task lists'),
      el('pre', {}, (t.objects || []).map(o => '<' + o[0] + '> (' + o[1] + ')').join('\n') || '(none)')));
  }
  return out;
}
function detailView(s){
  return [
    el('p', {}, el('button', {type: 'button', id: 'close'}, 'close'), ' ',
      el('button', {type: 'button', id: 'compare-btn'}, 'compare this task across planners')),
    el('h3', {}, s.task_id + ' \u2014 ' + s.planner),
    el('p', {}, s.tags.map(t => el('span', {'class': 'tag ' + t}, outLabels[t] || t)), ' outcome: ' + s.outcome,
      s.no_plan ? ' (no plan: ' + s.no_plan + ')' : '', s.rouge_l !== null && s.rouge_l !== undefined ? ', Rouge-L ' + s.rouge_l.toFixed(3) : ''),
    ...section('Task', el('p', {'class': 'instruction'}, s.instruction),
      (D.tasks[s.task_id] || {}).description ? el('p', {}, D.tasks[s.task_id].description) : null,
      s.categories.length ? el('p', {}, 'categories: ' + s.categories.join(', ')) : null,
      s.request ? el('p', {'class': 'request'}, (s.request.kind === 'twin' ? 'harmless twin' : 'hazardous request') +
        ' of pair ' + s.request.pair + ': ' + s.request.outcome.replace('_', ' ') +
        (s.request.signal ? ' (refusal signal: ' + s.request.signal + ')' : '')) : null),
    ...section('Raw output', s.generation_error ? el('p', {'class': 'viol'}, 'generation error: ' + s.generation_error) : null,
      el('pre', {'class': 'raw'}, s.raw_output === null ? '(none)' : s.raw_output)),
    s.parse_error ? el('p', {'class': 'viol'}, 'parse error (' + s.parse_error.kind + '): ' + (s.parse_error.message || '')) : null,
    ...turnsView(s),
    ...stepsView(s),
    s.violations.length ? el('p', {}, 'rules violated: ', s.rules.map(r => el('span', {'class': 'rule'}, r + ' '))) : null,
    ...extrasView(s),
    ...promptView(s),
  ];
}
function extrasView(s){  // each planner's own record (shield, clmasp, llm-planner:replan=k), by planner kind
  if (!s.extras) return [];
  return Object.keys(s.extras).map(k => el('details', {'class': 'extras', 'data-planner': k},
    el('summary', {}, 'Planner record: ' + k), el('pre', {}, JSON.stringify(s.extras[k], null, 1))));
}
function planNote(s){  // why a sample has no plan, with the message (compare mode's columns show it too)
  if (s.generation_error) return el('p', {'class': 'viol'}, 'generation error: ' + s.generation_error);
  if (s.parse_error) return el('p', {'class': 'viol'}, 'parse error (' + s.parse_error.kind + '): ' + (s.parse_error.message || ''));
  return null;
}
function compareView(task){
  const group = S.filter(s => s.task_id === task).sort((a, b) => (rank[a.planner] ?? 1e9) - (rank[b.planner] ?? 1e9));
  return [
    el('p', {}, el('button', {type: 'button', id: 'close'}, 'close')),
    el('h3', {}, 'Task ' + task + ' across planners'),
    el('p', {'class': 'instruction'}, group.length ? group[0].instruction : ''),
    el('div', {id: 'compare'}, group.map(s => el('div', {'class': 'col', 'data-planner': s.planner},
      el('h4', {}, el('a', {href: '#sample=' + s.i}, s.planner.replace('replay:', ''))),
      el('p', {}, s.tags.map(t => el('span', {'class': 'tag ' + t}, outLabels[t] || t))),
      planNote(s),
      ...stepsView(s)))),
  ];
}
const detail = $('detail');
function show(kids){
  detail.replaceChildren(...kids.flat().filter(k => k));
  detail.hidden = false;
  $('layout').classList.toggle('comparing', compareTask !== null);
  const c = $('close'); if (c) c.addEventListener('click', () => { current = null; compareTask = null; detail.hidden = true; $('layout').classList.remove('comparing'); writeHash(); renderList(); });
  const b = $('compare-btn'); if (b) b.addEventListener('click', () => { compare(S[current].task_id); });
}
function open(i){ current = i; compareTask = null; show(detailView(S[i])); writeHash(); renderList(); }
function compare(task){ compareTask = task; current = null; show(compareView(task)); writeHash(); renderList(); }
let writing = false;
function writeHash(){
  const st = state();
  if (current !== null) st.sample = current;
  if (compareTask !== null) st.compare = compareTask;
  const h = Object.entries(st).map(([k, v]) => k + '=' + encodeURIComponent(v)).join('&');
  writing = true;
  history.replaceState(null, '', h ? '#' + h : location.pathname + location.search);
  writing = false;
}
function readHash(){
  const p = new URLSearchParams(location.hash.replace(/^#/, ''));
  for (const [k, e] of Object.entries(F)) e.value = p.get(k) || '';
  current = null; compareTask = null;
  if (p.has('sample') && S[+p.get('sample')]) { current = +p.get('sample'); show(detailView(S[current])); }
  else if (p.has('compare')) { compareTask = p.get('compare'); show(compareView(compareTask)); }
  else { detail.hidden = true; $('layout').classList.remove('comparing'); }
  renderList();
  if (location.hash) $('browser').scrollIntoView();
}
for (const e of Object.values(F)) e.addEventListener(e.tagName === 'INPUT' ? 'input' : 'change', () => { renderList(); writeHash(); });
$('f-clear').addEventListener('click', () => { for (const e of Object.values(F)) e.value = ''; renderList(); writeHash(); });
window.addEventListener('hashchange', () => { if (!writing) readHash(); });
readHash();
})();
"""
