"""Python user-defined functions as the runtime sees them.

A UDF reaches the runtime through the JobGraph as a *reference* (a JSON string in the
node's params, see `make_reference`): the function's importable location (`module` +
`qualname`) and/or the id of an entry in this process-level registry. Functions defined
interactively (lambdas, local functions, objects in `__main__`) cannot be imported by
name, so `streamsql` registers them here and the JobGraph carries only the id. That works
for the local executor, which runs in the same process. A separate worker process (the
future parallel executor, or Spark) does not share this registry: it would need the
function shipped by value (cloudpickle of the registered object) next to the JobGraph.

`UdfSpec` is the metadata contract: `streamsql.udf`'s decorators attach one to the
wrapper they return (attribute `SPEC_ATTR`); the planner reads it to type calls; the
runtime reads it to call the function. The runtime never imports streamsql.
"""

from __future__ import annotations

import importlib
import itertools
import json
import threading
from typing import Any

from runtime.errors import user_code, user_traceback
from runtime.frozen import mutable_dataclass

SPEC_ATTR = "_streamsql_udf_spec"

KINDS = ("scalar", "table", "aggregate")
FUNC_TYPES = ("general", "pandas", "arrow")


@mutable_dataclass
class UdfSpec:
    """One Python UDF.

    kind: "scalar" | "table" | "aggregate". func: for scalar/table functions a callable or
    an object with `eval`; for aggregate functions an object with `create_accumulator`,
    `accumulate(acc, *args)`, `get_value(acc)` and optionally `retract(acc, *args)`
    (general), or a callable over whole columns (pandas). func_type: "general" (called per
    row / per input row), "pandas" (whole columns as pandas Series per batch; an aggregate
    gets each group's values) or "arrow" (whole columns as pyarrow arrays).
    Types are `runtime.types.DataType`s."""

    kind: str
    func: Any
    result_type: Any = None
    result_types: tuple[Any, ...] = ()
    input_types: tuple[Any, ...] | None = None
    accumulator_type: Any = None
    func_type: str = "general"
    name: str | None = None
    deterministic: bool = True

    def call_target(self) -> Any:
        """What to call per row (scalar/table): `func.eval` for function objects."""
        ev = getattr(self.func, "eval", None)
        return ev if callable(ev) else self.func


class FunctionContext:
    """What a function's `open(function_context)` receives (PyFlink's FunctionContext):
    the global job parameters (`pipeline.global-job-parameters`), the task it runs in and a
    metric group (runtime.udf_metrics: kept in this process, not exported), or none when
    `python.metric.enabled` is false (`get_metric_group` then raises as PyFlink does)."""

    def __init__(
        self,
        base_metric_group: Any = None,
        job_parameters: dict[str, str] | None = None,
        task_name: str | None = None,
        task_name_with_subtasks: str | None = None,
        number_of_parallel_subtasks: int | None = None,
        max_number_of_parallel_subtasks: int | None = None,
        index_of_this_subtask: int | None = None,
        attempt_number: int | None = None,
    ) -> None:
        self._base_metric_group = base_metric_group
        self._job_parameters = dict(job_parameters or {})
        self._task_name = task_name
        self._task_name_with_subtasks = task_name_with_subtasks
        self._number_of_parallel_subtasks = number_of_parallel_subtasks
        self._max_number_of_parallel_subtasks = max_number_of_parallel_subtasks
        self._index_of_this_subtask = index_of_this_subtask
        self._attempt_number = attempt_number

    def get_metric_group(self) -> Any:
        if self._base_metric_group is None:
            raise RuntimeError(
                "Metric has not been enabled. You can enable metric with the 'python.metric.enabled' configuration."
            )
        return self._base_metric_group

    def get_job_parameter(self, key: str, default_value: str) -> str:
        return self._job_parameters.get(key, default_value)

    def get_task_name(self) -> str | None:
        return self._task_name

    def get_task_name_with_subtasks(self) -> str | None:
        return self._task_name_with_subtasks

    def get_number_of_parallel_subtasks(self) -> int | None:
        return self._number_of_parallel_subtasks

    def get_max_number_of_parallel_subtasks(self) -> int | None:
        return self._max_number_of_parallel_subtasks

    def get_index_of_this_subtask(self) -> int | None:
        return self._index_of_this_subtask

    def get_attempt_number(self) -> int | None:
        return self._attempt_number


def job_parameters(config: dict[str, str]) -> dict[str, str]:
    """`pipeline.global-job-parameters` (Flink's map form `k1:v1,k2:v2`) as a dict."""
    from runtime.udf_options import GLOBAL_JOB_PARAMETERS  # start-up: loads with the first function's open()

    text = GLOBAL_JOB_PARAMETERS.get(config) or ""
    out: dict[str, str] = {}
    for item in text.split(","):
        k, sep, v = item.partition(":")
        if sep and k.strip():
            out[k.strip().strip("'\"")] = v.strip().strip("'\"")
    return out


def _open(spec: UdfSpec) -> None:
    """Call the function object's `open(FunctionContext)` once, before its first use (as
    PyFlink does per task), with the running job's parameters and a metric group."""
    opener = getattr(spec.func, "open", None)
    if callable(opener) and not isinstance(spec.func, type):
        from runtime.udf_metrics import MetricGroup  # start-up: loads with the first function's open()
        from runtime.udf_options import METRIC_ENABLED

        name = spec.name or "udf"
        config = _JOB_CONFIG
        metrics = METRIC_ENABLED.get(config)
        opener(
            FunctionContext(
                base_metric_group=MetricGroup() if metrics else None,
                job_parameters=job_parameters(config),
                task_name=name,
                task_name_with_subtasks=f"{name} (1/1)",
                number_of_parallel_subtasks=1,
                max_number_of_parallel_subtasks=1,
                index_of_this_subtask=0,
                attempt_number=0,
            )
        )


UNIMPLEMENTED = "__streamsql_unimplemented__"


def implements(obj: Any, method: str) -> bool:
    """Whether a function object defines `method` itself: base classes declare optional
    methods (retract, merge) for PyFlink's names, marked UNIMPLEMENTED."""
    m = getattr(obj, method, None)
    return m is not None and not getattr(m, UNIMPLEMENTED, False)


def _python_name(func: Any) -> str:
    """A function's Python name (for an error naming it when it has no SQL name)."""
    target = getattr(func, "__wrapped__", func)
    return str(getattr(target, "__qualname__", None) or type(target).__name__)


def spec_of(obj: Any) -> UdfSpec | None:
    """The spec attached to a decorated UDF object (None for a plain object)."""
    spec = getattr(obj, SPEC_ATTR, None)
    return spec if isinstance(spec, UdfSpec) else None


_LOCK = threading.Lock()
_IDS = itertools.count(1)
_REGISTRY: dict[str, UdfSpec] = {}
_CACHE: dict[str, UdfSpec] = {}


def register(spec: UdfSpec) -> str:
    """Keep `spec` in this process under a new id (returned)."""
    with _LOCK:
        rid = f"udf-{next(_IDS)}"
        _REGISTRY[rid] = spec
    return rid


def unregister(rid: str) -> None:
    with _LOCK:
        _REGISTRY.pop(rid, None)


def importable_location(obj: Any) -> tuple[str, str] | None:
    """(module, qualname) under which `obj` can be imported again, or None."""
    target = getattr(obj, "__wrapped__", obj)
    module = getattr(target, "__module__", None) or getattr(type(target), "__module__", None)
    qualname = getattr(target, "__qualname__", None)
    if not module or not qualname or module == "__main__" or "<" in qualname:
        return None
    try:
        found: Any = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return None
    return (module, qualname) if found is obj or found is target else None


def make_reference(spec: UdfSpec, obj: Any, registry_id: str | None) -> str:
    """The JSON reference a JobGraph carries for a function."""
    ref: dict[str, Any] = {"name": spec.name, "kind": spec.kind, "func_type": spec.func_type}
    loc = importable_location(obj)
    if loc is not None:
        ref["module"], ref["qualname"] = loc
    if registry_id is not None:
        ref["registry_id"] = registry_id
    return json.dumps(ref, sort_keys=True)


def import_object(path: str) -> Any:
    """`pkg.module.name` (or `pkg.module.Class.attr`) → the object."""
    parts = path.split(".")
    for i in range(len(parts) - 1, 0, -1):
        module = ".".join(parts[:i])
        try:
            found: Any = importlib.import_module(module)
        except ImportError:
            continue
        except Exception as e:  # noqa: BLE001 - the user's module raised while imported: say so, with its lines
            tb = user_traceback(e)
            raise ImportError(
                f"importing module '{module}' failed: {type(e).__name__}: {e}" + (f"\n{tb}" if tb else "")
            ) from e
        for p in parts[i:]:
            found = getattr(found, p)
        return found
    raise ImportError(f"cannot import '{path}'")


_ACTIVE_TASKS = 0
# The configuration of the job whose tasks run in this process: what `open()` hands a
# function (job parameters, whether metrics are on).
_JOB_CONFIG: dict[str, str] = {}


def task_started(config: dict[str, str] | None = None) -> None:
    """A task of a job starts in this process (`TaskRunner.open`): functions it resolves
    stay open until every task of the process has ended. `config`: the job's configuration."""
    global _ACTIVE_TASKS, _JOB_CONFIG
    with _LOCK:
        _ACTIVE_TASKS += 1
        if config is not None:
            _JOB_CONFIG = dict(config)


def task_ended() -> None:
    """A task ended (finished, failed, cancelled or restarting). When it was the last one
    running in this process, every function opened since is closed (PyFlink's `close()`,
    once per `open()`) and forgotten, so the next job (or the restarted attempt) opens it
    again. Functions are shared by the tasks of one process, hence the count rather than a
    close per task. A `close()` error is raised after all were closed."""
    global _ACTIVE_TASKS
    with _LOCK:
        _ACTIVE_TASKS = max(0, _ACTIVE_TASKS - 1)
        if _ACTIVE_TASKS:
            return
        opened = list({id(s.func): s for s in _CACHE.values()}.values())
        _CACHE.clear()
    error: Exception | None = None
    for spec in opened:
        closer = getattr(spec.func, "close", None)
        if callable(closer) and not isinstance(spec.func, type):
            try:
                with user_code(spec.name or _python_name(spec.func), "in close()"):
                    closer()
            except Exception as e:  # noqa: BLE001 - every function gets closed
                error = error or e
    if error is not None:
        raise error


def resolve(reference: str) -> UdfSpec:
    """The spec a JobGraph reference points to (registry first, then import); cached."""
    cached = _CACHE.get(reference)
    if cached is not None:
        return cached
    ref = json.loads(reference)
    spec = _REGISTRY.get(ref.get("registry_id") or "")
    if spec is None and ref.get("module"):
        obj = import_object(f"{ref['module']}.{ref['qualname']}")
        spec = spec_of(obj) or UdfSpec(ref.get("kind", "scalar"), obj, func_type=ref.get("func_type", "general"))
    if spec is None:
        raise LookupError(
            f"Python function {ref.get('name')!r} is not available in this process (it was registered "
            "interactively in another process; ship it with cloudpickle or define it in an importable module)"
        )
    name = ref.get("name") or spec.name or _python_name(spec.func)
    if isinstance(spec.func, type):
        with user_code(name, "when created"):
            spec = UdfSpec(**{**spec.__dict__, "func": spec.func()})
    with user_code(name, "in open()"):
        _open(spec)
    _CACHE[reference] = spec
    return spec
