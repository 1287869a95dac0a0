"""RequirementCache: truthy when the requirement's module can be found.
LitData uses it only to decide which optional backends to enable."""
import importlib.util
import re


class RequirementCache:
    def __init__(self, requirement='', module=None):
        name = module or re.split(r'[<>=!~\[ ;]', requirement, maxsplit=1)[0]
        self.requirement = requirement
        try:
            self.available = bool(name) and importlib.util.find_spec(name.replace('-', '_')) is not None
        except (ImportError, ValueError):
            self.available = False

    def __bool__(self):
        return self.available

    def __str__(self):
        return f'{self.requirement} is {"" if self.available else "not "}available'
