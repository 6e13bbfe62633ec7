# catalog_database.q - CREATE/DROP/USE/ALTER/SHOW/DESCRIBE CATALOG and DATABASE

# ==========================================================================
# errors
# ==========================================================================

use no_such_db;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.catalog.exceptions.CatalogException: A database with name [no_such_db] does not exist in the catalog: [default_catalog].
!error

use catalog no_such_catalog;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.catalog.exceptions.CatalogException: A catalog with name [no_such_catalog] does not exist.
!error

create catalog a.b with ('type'='generic_in_memory');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.sql.parser.impl.ParseException: Encountered "." at line 1, column 17.
Was expecting one of:
    <EOF>
    "WITH" ...
    "COMMENT" ...
    ";" ...
At line 1, column 17:
  create catalog a.b with ('type'='generic_in_memory')
                  ^
!error

create database nowhere.db;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Catalog nowhere does not exist
!error

create catalog untyped with ('default-database'='x');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Catalog options do not contain an option key 'type' for discovering a catalog. Known types: generic_in_memory, jdbc, sqlite
!error

create catalog unknown with ('type'='hive');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Could not find any factory for identifier 'hive' that implements 'org.apache.flink.table.factories.CatalogFactory' in the classpath.

Available factory identifiers are:

generic_in_memory
jdbc
sqlite
!error

create catalog extra with ('type'='generic_in_memory', 'colour'='blue');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Unsupported options found for 'generic_in_memory'.

Unsupported options:

colour

Supported options:

default-database
property-version
type
!error

# ==========================================================================
# catalogs
# ==========================================================================

create catalog cat1 with ('type'='generic_in_memory');
[INFO] Execute statement succeeded.
!info

show catalogs;
+-----------------+
|    catalog name |
+-----------------+
|            cat1 |
| default_catalog |
+-----------------+
2 rows in set
!ok

show catalogs like 'cat%';
+--------------+
| catalog name |
+--------------+
|         cat1 |
+--------------+
1 row in set
!ok

show catalogs not like 'cat%';
+-----------------+
|    catalog name |
+-----------------+
| default_catalog |
+-----------------+
1 row in set
!ok

show current catalog;
+----------------------+
| current catalog name |
+----------------------+
|      default_catalog |
+----------------------+
1 row in set
!ok

use catalog cat1;
[INFO] Execute statement succeeded.
!info

show current catalog;
+----------------------+
| current catalog name |
+----------------------+
|                 cat1 |
+----------------------+
1 row in set
!ok

show current database;
+-----------------------+
| current database name |
+-----------------------+
|               default |
+-----------------------+
1 row in set
!ok

drop catalog cat1;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.catalog.exceptions.CatalogException: Cannot drop a catalog which is currently in use.
!error

create catalog notes comment 'the ''notes'' catalog' with ('type'='generic_in_memory', 'default-database'='inbox');
[INFO] Execute statement succeeded.
!info

create catalog if not exists notes with ('type'='generic_in_memory');
[INFO] Execute statement succeeded.
!info

create catalog notes with ('type'='generic_in_memory');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.catalog.exceptions.CatalogException: Catalog notes already exists.
!error

show create catalog notes;
+---------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                          result |
+---------------------------------------------------------------------------------------------------------------------------------+
| CREATE CATALOG `notes`
COMMENT 'the ''notes'' catalog'
WITH (
  'default-database' = 'inbox',
  'type' = 'generic_in_memory'
)
 |
+---------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

describe catalog notes;
+-----------+---------------------+
| info name |          info value |
+-----------+---------------------+
|      name |               notes |
|      type |   generic_in_memory |
|   comment | the 'notes' catalog |
+-----------+---------------------+
3 rows in set
!ok

desc catalog extended notes;
+-------------------------+---------------------+
|               info name |          info value |
+-------------------------+---------------------+
|                    name |               notes |
|                    type |   generic_in_memory |
|                 comment | the 'notes' catalog |
| option:default-database |               inbox |
+-------------------------+---------------------+
4 rows in set
!ok

alter catalog notes set ('default-database'='archive');
[INFO] Execute statement succeeded.
!info

desc catalog extended notes;
+-------------------------+---------------------+
|               info name |          info value |
+-------------------------+---------------------+
|                    name |               notes |
|                    type |   generic_in_memory |
|                 comment | the 'notes' catalog |
| option:default-database |             archive |
+-------------------------+---------------------+
4 rows in set
!ok

alter catalog notes reset ('default-database');
[INFO] Execute statement succeeded.
!info

alter catalog notes reset ('type');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: ALTER CATALOG RESET does not support changing 'type'
!error

alter catalog notes reset ();
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: ALTER CATALOG RESET does not support empty key
!error

alter catalog notes comment '';
[INFO] Execute statement succeeded.
!info

describe catalog notes;
+-----------+-------------------+
| info name |        info value |
+-----------+-------------------+
|      name |             notes |
|      type | generic_in_memory |
|   comment |                   |
+-----------+-------------------+
3 rows in set
!ok

# ==========================================================================
# databases
# ==========================================================================

create database db1;
[INFO] Execute statement succeeded.
!info

create database if not exists db1;
[INFO] Execute statement succeeded.
!info

create database db1;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.catalog.exceptions.DatabaseAlreadyExistException: Database db1 already exists in Catalog cat1.
!error

create database db2 comment 'second' with ('owner'='me');
[INFO] Execute statement succeeded.
!info

alter database db2 set ('owner'='you');
[INFO] Execute statement succeeded.
!info

show databases;
+---------------+
| database name |
+---------------+
|           db1 |
|           db2 |
|       default |
+---------------+
3 rows in set
!ok

show databases like 'db%';
+---------------+
| database name |
+---------------+
|           db1 |
|           db2 |
+---------------+
2 rows in set
!ok

show databases ilike 'DB1%';
+---------------+
| database name |
+---------------+
|           db1 |
+---------------+
1 row in set
!ok

show databases not like 'db%';
+---------------+
| database name |
+---------------+
|       default |
+---------------+
1 row in set
!ok

use db1;
[INFO] Execute statement succeeded.
!info

show current database;
+-----------------------+
| current database name |
+-----------------------+
|                   db1 |
+-----------------------+
1 row in set
!ok

drop database db1;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Cannot drop a database which is currently in use.
!error

create database notes.d1;
[INFO] Execute statement succeeded.
!info

show databases from notes;
+---------------+
| database name |
+---------------+
|            d1 |
|         inbox |
+---------------+
2 rows in set
!ok

show databases in notes not like 'd%';
+---------------+
| database name |
+---------------+
|         inbox |
+---------------+
1 row in set
!ok

show databases from notes.d1;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.sql.parser.impl.ParseException: Show databases from/in identifier [ notes.d1 ] format error, catalog must be a single part identifier.
At line 1, column 21:
  show databases from notes.d1
                      ^
!error

create table db2.t (a int) with ('connector'='datagen');
[INFO] Execute statement succeeded.
!info

drop database db2;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.catalog.exceptions.DatabaseNotEmptyException: Database db2 in catalog cat1 is not empty.
!error

drop database db2 cascade;
[INFO] Execute statement succeeded.
!info

drop database if exists db2;
[INFO] Execute statement succeeded.
!info

drop database db2;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.catalog.exceptions.DatabaseNotExistException: Database db2 does not exist in Catalog cat1.
!error

# keywords as names, in backquotes
create catalog `mod` with ('type'='generic_in_memory');
[INFO] Execute statement succeeded.
!info

use catalog `mod`;
[INFO] Execute statement succeeded.
!info

use `default`;
[INFO] Execute statement succeeded.
!info

drop database `default`;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Cannot drop a database which is currently in use.
!error

use catalog cat1;
[INFO] Execute statement succeeded.
!info

drop catalog `mod`;
[INFO] Execute statement succeeded.
!info

drop catalog if exists `mod`;
[INFO] Execute statement succeeded.
!info

drop catalog `mod`;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Catalog mod does not exist.
!error

# ==========================================================================
# tables across catalogs and databases
# ==========================================================================

create table T1 (a int, b string) with ('connector' = 'datagen');
[INFO] Execute statement succeeded.
!info

create table notes.d1.T2 (a int) with ('connector' = 'datagen');
[INFO] Execute statement succeeded.
!info

create view V1 as select 1 + 1 as two;
[INFO] Execute statement succeeded.
!info

show tables;
+------------+
| table name |
+------------+
|         T1 |
|         V1 |
+------------+
2 rows in set
!ok

show views;
+-----------+
| view name |
+-----------+
|        V1 |
+-----------+
1 row in set
!ok

show tables from notes.d1;
+------------+
| table name |
+------------+
|         T2 |
+------------+
1 row in set
!ok

use catalog notes;
[INFO] Execute statement succeeded.
!info

use d1;
[INFO] Execute statement succeeded.
!info

show tables;
+------------+
| table name |
+------------+
|         T2 |
+------------+
1 row in set
!ok

show tables in cat1.`default` like 'T%';
+------------+
| table name |
+------------+
|         T1 |
+------------+
1 row in set
!ok

show tables from cat1.`default` not like 'T%';
+------------+
| table name |
+------------+
|         V1 |
+------------+
1 row in set
!ok

create table cat1.missing_db.t (a int) with ('connector' = 'datagen');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.catalog.exceptions.DatabaseNotExistException: Database missing_db does not exist in Catalog cat1.
!error

drop table cat1.`default`.T1;
[INFO] Execute statement succeeded.
!info

drop view cat1.`default`.V1;
[INFO] Execute statement succeeded.
!info

show tables from cat1.`default`;
Empty set
!ok
