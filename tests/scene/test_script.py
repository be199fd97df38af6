import pytest

from safebeal.scene import ScriptSyntaxError, parse_line, parse_script


def test_parse_line_with_dataset_ids():
    sl = parse_line("[PUTBACK] <water_glass> (1.1000) <cupboard> (1.229)", 3)
    assert sl.action == "PUTBACK"
    assert [(a.name, a.id) for a in sl.args] == [("water_glass", 1000), ("cupboard", 229)]
    assert sl.line_no == 3
    assert str(sl) == "[PUTBACK] <water_glass> (1000) <cupboard> (229)"


def test_parse_script_skips_blank_and_comments_and_keeps_line_numbers():
    s = parse_script("# header\n\n[walk] <Dining Room> (201)\n  [STANDUP]  \n", source="p.txt")
    assert [str(x) for x in s] == ["[WALK] <dining_room> (201)", "[STANDUP]"]
    assert [x.line_no for x in s] == [3, 4]
    assert s.source == "p.txt"


@pytest.mark.parametrize(
    "line",
    ["WALK <kitchen> (1)", "[WALK] <kitchen>", "[WALK] <kitchen> (x)", "[WALK] kitchen (1)", "[WALK] <a> (1) trailing", "[] <a> (1)"],
)
def test_syntax_errors_name_source_line_and_expectation(line):
    with pytest.raises(ScriptSyntaxError) as ei:
        parse_script("[WALK] <kitchen> (11)\n" + line, source="plan.txt")
    e = ei.value
    assert e.line_no == 2 and e.source == "plan.txt"
    assert str(e).startswith("plan.txt:2: cannot parse") and "expected '[ACTION] <name> (id)'" in str(e)
