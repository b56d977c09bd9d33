"""define_config: the record's grouped names, validated by the same code as loom.toml."""

from __future__ import annotations

import pytest

import loom


def test_the_grouped_config_with_the_records_names_is_accepted():
    config = loom.define_config({
        "execution": {"claimCheck": {"toolIds": ["search"], "inlineCapBytes": 2048,
                                     "preview": 128, "reclaimable": ["search"]}},
        "storage": {"home": "somewhere"},
    })
    text = config.describe()
    assert 'execution.claimCheck.toolIds = ["search"]' in text
    assert "execution.claimCheck.inlineCapBytes = 2048" in text
    assert config.home == "somewhere"


def test_every_problem_is_named_by_its_option_path():
    with pytest.raises(loom.ConfigValidationError) as e:
        loom.define_config({"execution": {"retry": {"bogus": 1},
                                          "claimCheck": {"inlineCapBytes": "big"}}})
    paths = [issue.path for issue in e.value.issues]
    assert "execution.retry.bogus" in paths
    assert "execution.claimCheck.inlineCapBytes" in paths
    assert e.value.code == "config"
    assert isinstance(e.value, loom.ConfigError)


def test_a_flat_spelling_is_refused_with_the_grouped_path():
    with pytest.raises(loom.ConfigValidationError) as e:
        loom.define_config({"claimCheck": {"toolIds": ["search"]}})
    assert e.value.issues[0].path == "claimCheck"
    assert "execution.claimCheck" in e.value.issues[0].message


def test_a_null_value_is_refused_at_its_path():
    with pytest.raises(loom.ConfigValidationError) as e:
        loom.define_config({"storage": {"home": None}})
    assert e.value.issues[0].path == "storage.home"
    assert "null" in e.value.issues[0].message


def test_a_value_json_cannot_hold_is_a_typed_error_naming_where():
    with pytest.raises(loom.InvalidArgumentError) as e:
        loom.define_config({"storage": {"home": {1, 2}}})
    assert "$.storage.home" in str(e.value) and "set" in str(e.value)


def test_a_toml_file_gives_the_same_config(tmp_path):
    path = tmp_path / "loom.toml"
    path.write_text('[execution.claimCheck]\ntoolIds = ["search"]\n')
    assert 'toolIds = ["search"]' in loom.define_config(str(path)).describe()
    bad = tmp_path / "bad.toml"
    bad.write_text("[execution]\nbogus = 1\n")
    with pytest.raises(loom.ConfigValidationError) as e:
        loom.define_config(bad)
    assert e.value.issues[0].path == "execution.bogus"
    assert e.value.origin == str(bad)


def test_callables_need_the_claim_check_they_belong_to():
    with pytest.raises(loom.ConfigValidationError) as e:
        loom.define_config({"execution": {"claimCheck": {"onOffload": print}}})
    assert any(i.path == "execution.claimCheck.toolIds" for i in e.value.issues)


class Tagging:
    name = "tagging"

    def invoke(self, ctx, input, next):
        return next(input)


def test_python_middleware_keeps_its_place_in_the_chain():
    config = loom.define_config({"execution": {"effectMiddleware": [
        {"kind": "retry", "attempts": 2}, Tagging(), {"kind": "timeout", "ms": 5000}]}})
    chain = [line for line in config.describe().splitlines() if "chain" in line.lower()]
    assert chain, config.describe()
    text = chain[-1]
    assert text.index("retry") < text.index("tagging") < text.index("timeout"), text
    assert text.index("killSwitch") < text.index("retry"), text


def test_the_defaults_of_the_record_are_exported():
    assert loom.DEFAULT_CLAIM_CHECK_CAP_BYTES == 1024
    assert loom.DEFAULT_CLAIM_CHECK_PREVIEW_CHARS == 256
