import pytest

from itemsmith.handlers import DatasetHandler, HandlerContractError, HandlerSourceError, load_handler_source
from itemsmith.handlers.loader import check_handler, load_handler_class
from itemsmith.handlers.registry import BUILTIN_HANDLERS, resolve_handler

GOOD = '''
import pandas as pd
from itemsmith.handlers import DatasetHandler

class Tiny(DatasetHandler):
    name = "tiny"
    description = "two records"

    def records(self):
        return pd.DataFrame({"record_id": ["a", "b"], "label": [0, 1]})

    def series(self, record_id):
        return pd.DataFrame({"value": [1.0, 2.0, 3.0]})
'''

PAPER_STYLE = '''
import pandas as pd

class Legacy:
    def getDataframe(self):
        return pd.DataFrame({"record_id": [1, 2]})

    def query(self, record_id):
        return pd.DataFrame({"v": [float(record_id)] * 4})
'''


def test_subclass_needs_one_name_of_each_pair():
    with pytest.raises(HandlerContractError, match=r"series\(\)/query\(\)"):
        type("OnlyRecords", (DatasetHandler,), {"records": lambda self: None})


def test_aliases_dispatch_to_the_implemented_names():
    handler = load_handler_source(GOOD)
    assert list(handler.getDataframe()["record_id"]) == ["a", "b"]
    assert handler.get_dataframe().equals(handler.records())
    assert handler.query("a").equals(handler.series("a"))


def test_timeseriesexamagent_style_class_is_adapted():
    handler = load_handler_source(PAPER_STYLE)
    assert isinstance(handler, DatasetHandler)
    assert handler.records()["record_id"].tolist() == [1, 2]
    assert handler.series(2)["v"].tolist() == [2.0] * 4


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("class X(:\n  pass", "syntax error at line 1"),
        ("class X:\x00 pass", "syntax error: source code string cannot contain null bytes"),
        ("x = 1\n", "defines no handler class"),
        (GOOD + GOOD.replace("class Tiny", "class Tiny2").split("import pandas as pd\nfrom itemsmith.handlers import DatasetHandler")[1],
         "several handler classes (Tiny, Tiny2)"),
        ("class H:\n    def records(self):\n        return None\n", "must implement series()/query()"),
        ("raise RuntimeError('boom')\nclass H:\n    def records(self): pass\n    def series(self, r): pass\n",
         "raised RuntimeError while loading: boom"),
        (GOOD.replace('description = "two records"', 'def description(self):\n        return "two records"'),
         "Tiny.description must be a string (what the data is: units, sampling, what a record is), got method"),
    ],
)
def test_source_errors_are_clear(source, message):
    with pytest.raises(HandlerSourceError) as info:
        load_handler_source(source)
    assert message in str(info.value)


def test_description_may_be_set_per_instance():
    source = GOOD.replace('description = "two records"', 'def __init__(self):\n        self.description = "set late"')
    assert load_handler_source(source).description == "set late"


def test_class_name_selects_one_of_several():
    two = GOOD + "\nclass Other(Tiny):\n    name = 'other'\n"
    assert load_handler_class(two, class_name="Other").name == "other"
    with pytest.raises(HandlerSourceError, match="no class named 'Missing'"):
        load_handler_class(two, class_name="Missing")


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ("return [1, 2]", "must return a pandas DataFrame"),
        ("return pd.DataFrame({'id': [1]})", "must have a 'record_id' column"),
        ("return pd.DataFrame({'record_id': []})", "returned no records"),
        ("return pd.DataFrame({'record_id': [1, 1]})", "duplicate record_id"),
        ("raise KeyError('gone')", "records() raised KeyError"),
    ],
)
def test_broken_records_contract(records, message):
    source = f'''
import pandas as pd
class H:
    def records(self):
        {records}
    def series(self, record_id):
        return pd.DataFrame({{"v": [1.0]}})
'''
    with pytest.raises(HandlerSourceError) as info:
        load_handler_source(source)
    assert message in str(info.value)


def test_broken_series_contract():
    source = PAPER_STYLE.replace('return pd.DataFrame({"v": [float(record_id)] * 4})', "return [1, 2]")
    with pytest.raises(HandlerSourceError, match="series\\(\\) must return a pandas DataFrame"):
        load_handler_source(source)


def test_constructor_gets_data_dir(tmp_path):
    (tmp_path / "data.csv").write_text("record_id,x\nr1,1.5\n")
    source = '''
import pandas as pd
class FromFile:
    def __init__(self, data_dir):
        self.frame = pd.read_csv(data_dir / "data.csv")
    def records(self):
        return self.frame[["record_id"]]
    def series(self, record_id):
        return self.frame[self.frame.record_id == record_id][["x"]]
'''
    path = tmp_path / "my_handler.py"
    path.write_text(source)
    handler = resolve_handler(str(path))
    assert handler.series("r1")["x"].tolist() == [1.5]
    check_handler(handler)


def test_resolve_unknown_name_lists_builtins():
    with pytest.raises(HandlerSourceError, match=r"unknown handler 'nope' \(known: .*synthetic"):
        resolve_handler("nope")
    with pytest.raises(HandlerSourceError, match="does not exist"):
        resolve_handler("missing_handler.py")


def test_registry_names_are_unique_and_point_to_module_class():
    for name, entry in BUILTIN_HANDLERS.items():
        assert entry.name == name and ":" in entry.target
