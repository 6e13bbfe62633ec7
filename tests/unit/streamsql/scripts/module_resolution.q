# module_resolution.q - module names are case-sensitive identifiers, found by name; a function
# no loaded module provides is Calcite's "No match found" (the statements of Flink's module.q
# that need no second module)

SHOW FULL MODULES;
+-------------+------+
| module name | used |
+-------------+------+
|        core | TRUE |
+-------------+------+
1 row in set
!ok

# SUBSTRING_INDEX is a Hive module function: unknown with the core module alone
SELECT SUBSTRING_INDEX('www.apache.org', '.', 2) FROM (VALUES (1, 'Hello World')) AS T(id, str);
[ERROR] Could not execute SQL statement. Reason:
org.apache.calcite.sql.validate.SqlValidatorException: No match found for function signature SUBSTRING_INDEX(<CHARACTER>, <CHARACTER>, <NUMERIC>)
At line 1, column 8:
  SELECT SUBSTRING_INDEX('www.apache.org', '.', 2) FROM (VALUES (1, 'Hello World')) AS T(id, str)
         ^
!error

# a module name is an identifier, not a string literal
LOAD MODULE 'core';
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.sql.parser.impl.ParseException: Encountered "'core'" at line 1, column 13.
Was expecting a module name
At line 1, column 13:
  LOAD MODULE 'core'
              ^
!error

# names are case-sensitive
LOAD MODULE Core;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Could not find any factory for identifier 'Core' that implements 'org.apache.flink.table.factories.ModuleFactory' in the classpath.

Available factory identifiers are:

core
!error

# the module's name finds its factory: a 'type' option is refused first
LOAD MODULE mycore WITH ('type' = 'core');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Option 'type' = 'core' is not supported since module name is used to find module
!error

# SHOW MODULES takes no LIKE
SHOW MODULES LIKE 'c%';
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.sql.parser.impl.ParseException: Encountered "LIKE" at line 1, column 14.
Was expecting <EOF>
At line 1, column 14:
  SHOW MODULES LIKE 'c%'
               ^
!error

USE MODULES Core;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: No module with name 'Core' exists
!error

USE MODULES core;
[INFO] Execute statement succeeded.
!info

SELECT UPPER(str) AS u FROM (VALUES (1, 'Hello World')) AS T(id, str);
+----+--------------------------------+
| op |                              u |
+----+--------------------------------+
| +I |                    HELLO WORLD |
+----+--------------------------------+
Received a total of 1 row
!ok

SHOW MODULES;
+-------------+
| module name |
+-------------+
|        core |
+-------------+
1 row in set
!ok
