# model.q - models as catalog objects (Flink 2.3's MODEL statements); predicting with
# one (ML_PREDICT) needs a Java model provider and is refused

show models;
Empty set
!ok

create model sentiment
input (`text` string comment 'the review')
output (label string, score double not null)
comment 'review sentiment'
with ('provider' = 'openai', 'task' = 'classification', 'endpoint' = 'https://api.example.com/v1');
[INFO] Execute statement succeeded.
!info

create model sentiment input (x string) output (y string) with ('provider' = 'openai');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.catalog.exceptions.ModelAlreadyExistException: Model default_database.sentiment already exists in Catalog default_catalog.
!error

create model plain input (a int) output (b bigint) with ('provider' = 'triton');
[INFO] Execute statement succeeded.
!info

show models;
+------------+
| model name |
+------------+
|      plain |
|  sentiment |
+------------+
2 rows in set
!ok

describe model sentiment;
+-------+--------+-------+----------+------------+
|  name |   type |  null | is input |    comment |
+-------+--------+-------+----------+------------+
|  text | STRING |  TRUE |     TRUE | the review |
| label | STRING |  TRUE |    FALSE |     <NULL> |
| score | DOUBLE | FALSE |    FALSE |     <NULL> |
+-------+--------+-------+----------+------------+
3 rows in set
!ok

desc model plain;
+------+--------+------+----------+
| name |   type | null | is input |
+------+--------+------+----------+
|    a |    INT | TRUE |     TRUE |
|    b | BIGINT | TRUE |    FALSE |
+------+--------+------+----------+
2 rows in set
!ok

show create model sentiment;
+----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                                                                                                                     result |
+----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE MODEL `default_catalog`.`default_database`.`sentiment`
INPUT (`text` VARCHAR(2147483647) COMMENT 'the review')
OUTPUT (`label` VARCHAR(2147483647), `score` DOUBLE NOT NULL)
COMMENT 'review sentiment'
WITH (
  'endpoint' = 'https://api.example.com/v1',
  'provider' = 'openai',
  'task' = 'classification'
)
 |
+----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

alter model sentiment set ('task' = 'text_generation', 'model' = 'gpt-4o');
[INFO] Execute statement succeeded.
!info

alter model sentiment reset ('endpoint');
[INFO] Execute statement succeeded.
!info

show create model sentiment;
+------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                                                                                               result |
+------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE MODEL `default_catalog`.`default_database`.`sentiment`
INPUT (`text` VARCHAR(2147483647) COMMENT 'the review')
OUTPUT (`label` VARCHAR(2147483647), `score` DOUBLE NOT NULL)
COMMENT 'review sentiment'
WITH (
  'model' = 'gpt-4o',
  'provider' = 'openai',
  'task' = 'text_generation'
)
 |
+------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

alter model sentiment rename to opinions;
[INFO] Execute statement succeeded.
!info

alter model no_such set ('a' = 'b');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Model `default_catalog`.`default_database`.`no_such` doesn't exist.
!error

create temporary model scratch input (q string) output (a string) with ('provider' = 'openai');
[INFO] Execute statement succeeded.
!info

alter model scratch set ('a' = 'b');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Model `default_catalog`.`default_database`.`scratch` is a temporary model.
!error

show create model scratch;
+--------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                   result |
+--------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TEMPORARY MODEL `default_catalog`.`default_database`.`scratch`
INPUT (`q` VARCHAR(2147483647))
OUTPUT (`a` VARCHAR(2147483647))
WITH (
  'provider' = 'openai'
)
 |
+--------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

show models;
+------------+
| model name |
+------------+
|   opinions |
|      plain |
|    scratch |
+------------+
3 rows in set
!ok

create table reviews (`text` string) with ('connector' = 'datagen', 'number-of-rows' = '1');
[INFO] Execute statement succeeded.
!info

select * from ml_predict(table reviews, model opinions, descriptor(`text`));
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: ML_PREDICT is not supported: a model predicts through its model provider, and Flink's model providers (OpenAI, Triton, ...) are Java classes, while streamsql runs without a JVM
At line 1, column 15:
  select * from ml_predict(table reviews, model opinions, descriptor(`text`))
                ^
Call the model from a Python function instead (CREATE FUNCTION ... LANGUAGE PYTHON, docs/udf.md). Models can still be created, described, altered, listed and dropped.
!error

create model dup input (a int, a int) output (b int) with ('provider' = 'openai');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Duplicate input column name: 'a'.
!error

drop temporary model scratch;
[INFO] Execute statement succeeded.
!info

drop model opinions;
[INFO] Execute statement succeeded.
!info

drop model opinions;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Model with identifier 'default_catalog.default_database.opinions' does not exist.
!error

describe model opinions;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Model with the identifier 'default_catalog.default_database.opinions' doesn't exist.
!error

show create model opinions;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Could not execute SHOW CREATE MODEL. Model with identifier `default_catalog`.`default_database`.`opinions` does not exist.
!error

show models;
+------------+
| model name |
+------------+
|      plain |
+------------+
1 row in set
!ok
