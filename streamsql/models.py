"""Models as catalog objects: CREATE / DROP / ALTER MODEL, DESCRIBE MODEL, SHOW CREATE
MODEL and SHOW MODELS, with Flink 2.3's outputs and messages.

In Flink a model is catalog metadata: input columns, output columns, options (the
`provider` and its settings) and a comment. Registering, listing, describing, altering and
dropping one needs no JVM, so streamsql keeps models in its catalogs like Flink does
(temporary ones in the session; permanent ones in the catalog: the `sqlite` catalog's
file keeps them). Predicting with a model (`ML_PREDICT`) runs Flink's model providers
(OpenAI, Triton, ...), which are Java classes: the query is refused
(`planner.parse_cursor.model_function_refusal`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from planner.catalog import _options_text, like_pattern, serializable_type, type_text
from planner.catalog_objects import quoted
from planner.catalog_store import CatalogError, CatalogStore
from planner.statements import ColumnDef, Show
from planner.statements_models import AlterModel, CreateModel, DescribeModel, DropModel, ShowCreateModel
from runtime.frozen import frozen_dataclass
from runtime.types import BOOLEAN, STRING, DataType, Field
from streamsql.result import TableResult

if TYPE_CHECKING:
    from streamsql.environment import TableEnvironment

VALIDATION = "org.apache.flink.table.api.ValidationException"
Path = tuple[str, str, str]


@frozen_dataclass
class ModelColumn:
    name: str
    type: DataType
    comment: str | None = None


@frozen_dataclass
class ModelDefinition:
    """A model's catalog entry (Flink's CatalogModel)."""

    inputs: tuple[ModelColumn, ...]
    outputs: tuple[ModelColumn, ...]
    options: dict[str, str]
    comment: str | None = None

    def to_json(self) -> dict[str, Any]:
        def cols(cs: tuple[ModelColumn, ...]) -> list[dict[str, Any]]:
            return [{"name": c.name, "type": c.type.to_json(), "comment": c.comment} for c in cs]

        return {
            "input": cols(self.inputs),
            "output": cols(self.outputs),
            "options": dict(self.options),
            "comment": self.comment,
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> ModelDefinition:
        def cols(items: list[dict[str, Any]]) -> tuple[ModelColumn, ...]:
            return tuple(ModelColumn(c["name"], DataType.from_json(c["type"]), c.get("comment")) for c in items)

        return ModelDefinition(cols(d["input"]), cols(d["output"]), dict(d["options"]), d.get("comment"))


def _err(stmt: Any, message: str, flink_class: str = VALIDATION) -> CatalogError:
    return CatalogError(message, flink_class, sql=stmt.sql, line=1, column=1)


def _columns(stmt: CreateModel, defs: tuple[ColumnDef, ...], kind: str) -> tuple[ModelColumn, ...]:
    seen: set[str] = set()
    for c in defs:
        if c.name in seen:
            raise _err(stmt, f"Duplicate {kind} column name: '{c.name}'.")
        seen.add(c.name)
    return tuple(ModelColumn(c.name, c.type, c.comment) for c in defs if c.type is not None)


def _store(env: TableEnvironment, path: Path, stmt: Any) -> CatalogStore:
    cat = env.catalog
    store = cat.catalogs.get(path[0])
    if store is None:
        raise _err(stmt, f"Catalog {path[0]} does not exist")
    if store.get_database(path[1]) is None:
        raise _err(
            stmt,
            f"Database {path[1]} does not exist in Catalog {path[0]}.",
            "org.apache.flink.table.catalog.exceptions.DatabaseNotExistException",
        )
    return store


def lookup(env: TableEnvironment, path: Path) -> tuple[ModelDefinition, bool] | None:
    """The model at `path` and whether it is temporary (a temporary model shadows a
    permanent one), or None."""
    temp = env.catalog.temporary_models.get(path)
    if temp is not None:
        return ModelDefinition.from_json(temp), True
    store = env.catalog.catalogs.get(path[0])
    if store is None or store.get_database(path[1]) is None:
        return None
    found = store.get_model(path[1], path[2])
    return (ModelDefinition.from_json(found), False) if found is not None else None


def create_model(env: TableEnvironment, stmt: CreateModel) -> TableResult:
    path = env.catalog.qualify(stmt.name, stmt.sql)
    model = ModelDefinition(
        _columns(stmt, stmt.input_columns, "input"),
        _columns(stmt, stmt.output_columns, "output"),
        dict(stmt.options),
        stmt.comment or None,
    )
    if stmt.temporary:
        env.catalog.catalog(path[0], stmt.sql)
        if path in env.catalog.temporary_models:
            if stmt.if_not_exists:
                return TableResult.ok()
            raise _err(stmt, f"Temporary model '{quoted(path)}' already exists")
        env.catalog.temporary_models[path] = model.to_json()
        return TableResult.ok()
    store = _store(env, path, stmt)
    if store.get_model(path[1], path[2]) is not None:
        if stmt.if_not_exists:
            return TableResult.ok()
        raise _err(
            stmt,
            f"Model {path[1]}.{path[2]} already exists in Catalog {path[0]}.",
            "org.apache.flink.table.catalog.exceptions.ModelAlreadyExistException",
        )
    store.put_model(path[1], path[2], model.to_json())
    return TableResult.ok()


def drop_model(env: TableEnvironment, stmt: DropModel) -> TableResult:
    cat = env.catalog
    path = cat.qualify(stmt.name, stmt.sql)
    if stmt.temporary:
        if cat.temporary_models.pop(path, None) is None and not stmt.if_exists:
            raise _err(stmt, f"Temporary model with identifier '{'.'.join(path)}' does not exist.")
        return TableResult.ok()
    if path in cat.temporary_models:
        raise _err(
            stmt,
            f"Temporary model with identifier '{quoted(path)}' exists. Drop it first before removing the "
            "permanent model.",
        )
    store = cat.catalogs.get(path[0])
    exists = store is not None and store.get_database(path[1]) is not None and store.get_model(path[1], path[2])
    if not exists or store is None:
        if stmt.if_exists:
            return TableResult.ok()
        raise _err(stmt, f"Model with identifier '{'.'.join(path)}' does not exist.")
    store.remove_model(path[1], path[2])
    return TableResult.ok()


def alter_model(env: TableEnvironment, stmt: AlterModel) -> TableResult:
    cat = env.catalog
    path = cat.qualify(stmt.name, stmt.sql)
    found = lookup(env, path)
    if found is None:
        if stmt.if_exists:
            return TableResult.ok()
        raise _err(stmt, f"Model {quoted(path)} doesn't exist.")
    model, temporary = found
    if temporary:
        raise _err(stmt, f"Model {quoted(path)} is a temporary model.")
    store = _store(env, path, stmt)
    if stmt.action == "RENAME":
        assert stmt.new_name is not None
        new_path = cat.qualify(stmt.new_name, stmt.sql)
        if new_path[0] != path[0]:
            raise _err(
                stmt,
                f"The catalog name of the new model name '{'.'.join(new_path)}' must be the same as the old "
                f"model name '{'.'.join(path)}'.",
            )
        _store(env, new_path, stmt)
        if store.get_model(new_path[1], new_path[2]) is not None:
            raise _err(
                stmt,
                f"Model {new_path[1]}.{new_path[2]} already exists in Catalog {new_path[0]}.",
                "org.apache.flink.table.catalog.exceptions.ModelAlreadyExistException",
            )
        store.put_model(new_path[1], new_path[2], model.to_json())
        store.remove_model(path[1], path[2])
        return TableResult.ok()
    options = dict(model.options)
    if stmt.action == "SET":
        if not stmt.options:
            raise _err(stmt, "ALTER MODEL SET does not support empty option.")
        options.update(stmt.options)
    else:
        if not stmt.keys:
            raise _err(stmt, "ALTER MODEL RESET does not support empty key.")
        for key in stmt.keys:
            options.pop(key, None)
    new = ModelDefinition(model.inputs, model.outputs, options, model.comment)
    store.put_model(path[1], path[2], new.to_json())
    return TableResult.ok()


def describe_model(env: TableEnvironment, stmt: DescribeModel) -> TableResult:
    """Flink's DESCRIBE MODEL: a row per input column then per output column (`name`,
    `type`, `null`, `is input`, and `comment` when a column has one)."""
    path = env.catalog.qualify(stmt.name, stmt.sql)
    found = lookup(env, path)
    if found is None:
        raise _err(stmt, f"Model with the identifier '{'.'.join(path)}' doesn't exist.")
    model = found[0]
    columns = [(c, True) for c in model.inputs] + [(c, False) for c in model.outputs]
    with_comments = any(c.comment for c, _ in columns)
    names = ["name", "type", "null", "is input"] + (["comment"] if with_comments else [])
    fields = tuple(Field(n, BOOLEAN() if n in ("null", "is input") else STRING()) for n in names)
    rows = []
    for c, is_input in columns:
        row: tuple[Any, ...] = (c.name, type_text(c.type), c.type.nullable, is_input)
        rows.append(row + ((c.comment,) if with_comments else ()))
    return TableResult.of_rows(fields, rows)


def _column_text(c: ModelColumn) -> str:
    text = f"{quoted((c.name,))} {serializable_type(c.type)}"
    if c.comment:
        text += " COMMENT '" + c.comment.replace("'", "''") + "'"
    return text


def show_create_model_text(path: Path, model: ModelDefinition, temporary: bool) -> str:
    """SHOW CREATE MODEL's text, as Flink's ShowCreateUtil prints it."""
    text = f"CREATE {'TEMPORARY ' if temporary else ''}MODEL {quoted(path)}\n"
    if model.inputs:
        text += f"INPUT ({', '.join(_column_text(c) for c in model.inputs)})\n"
    if model.outputs:
        text += f"OUTPUT ({', '.join(_column_text(c) for c in model.outputs)})\n"
    if model.comment:
        text += "COMMENT '" + model.comment.replace("'", "''") + "'\n"
    if model.options:
        text += "WITH (\n" + _options_text(model.options) + "\n)\n"
    return text


def show_create_model(env: TableEnvironment, stmt: ShowCreateModel) -> TableResult:
    path = env.catalog.qualify(stmt.name, stmt.sql)
    found = lookup(env, path)
    if found is None:
        raise _err(stmt, f"Could not execute SHOW CREATE MODEL. Model with identifier {quoted(path)} does not exist.")
    return TableResult.of_rows((Field("result", STRING()),), [(show_create_model_text(path, *found),)])


def show_models(env: TableEnvironment, stmt: Show) -> TableResult:
    """SHOW MODELS [FROM | IN [c.]db] [[NOT] [I]LIKE p]: permanent and temporary models."""
    cat = env.catalog
    catalog, database = cat.current_catalog, cat.current_database
    if stmt.scope:
        scope = tuple(stmt.scope)
        catalog, database = (catalog, scope[0]) if len(scope) == 1 else (scope[0], scope[1])
        store = cat.catalogs.get(catalog)
        if store is None or store.get_database(database) is None:
            raise _err(stmt, f"Database `{catalog}`.`{database}` doesn't exist.")
    store = cat.catalogs.get(catalog)
    names = set(store.list_models(database)) if store is not None else set()
    names |= {p[2] for p in cat.temporary_models if p[:2] == (catalog, database)}
    listed = sorted(names)
    if stmt.like is not None:
        rx = like_pattern(stmt.like, stmt.ilike)
        listed = [n for n in listed if bool(rx.fullmatch(n)) != stmt.not_like]
    return TableResult.of_rows((Field("model name", STRING()),), [(n,) for n in listed])


HANDLERS: dict[type, Callable[[Any, Any], TableResult]] = {
    CreateModel: create_model,
    DropModel: drop_model,
    AlterModel: alter_model,
    DescribeModel: describe_model,
    ShowCreateModel: show_create_model,
}
