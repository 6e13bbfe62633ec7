# module.q - LOAD/UNLOAD/USE MODULES, SHOW [FULL] MODULES

show modules;
+-------------+
| module name |
+-------------+
|        core |
+-------------+
1 row in set
!ok

show full modules;
+-------------+------+
| module name | used |
+-------------+------+
|        core | TRUE |
+-------------+------+
1 row in set
!ok

load module core;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: A module with name 'core' already exists
!error

load module hive with ('hive-version' = '3.1.3');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Could not find any factory for identifier 'hive' that implements 'org.apache.flink.table.factories.ModuleFactory' in the classpath.

Available factory identifiers are:

core
!error

unload module hive;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: No module with name 'hive' exists
!error

use modules core;
[INFO] Execute statement succeeded.
!info

use modules core, core;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Module 'core' appears more than once
!error

use modules hive;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: No module with name 'hive' exists
!error

unload module core;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: UNLOAD MODULE core is not supported: streamsql's built-in functions cannot be switched off
!error

show full modules;
+-------------+------+
| module name | used |
+-------------+------+
|        core | TRUE |
+-------------+------+
1 row in set
!ok
