from safebeal.scene import _sim
from safebeal.scene.actions import ACTION_ARITY


def test_vocabulary_matches_simulator_enum():
    sim = {name: member.value[1] for name, member in _sim.Action.__members__.items()}
    assert ACTION_ARITY == sim
    assert ACTION_ARITY["PUTBACK"] == 2 and ACTION_ARITY["POUR"] == 2 and ACTION_ARITY["STANDUP"] == 0
