-- +goose Up

-- Platforms an administrator defined (app/platforms): the JSON definition
-- as imported or saved from the form, checked before it is stored and
-- again when it is loaded. platform_id is the value devices and templates
-- store; it always starts with custom_, so it never clashes with a
-- built-in platform. Ids are never reused (AUTOINCREMENT, as 00012).
CREATE TABLE custom_platforms (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    platform_id TEXT    NOT NULL UNIQUE,
    definition  TEXT    NOT NULL,
    created_at  TEXT    NOT NULL,
    updated_at  TEXT    NOT NULL
);

-- +goose Down
DROP TABLE custom_platforms;
