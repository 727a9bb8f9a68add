-- The tables of the Debezium golden records (tests/cdc/capture-golden.sh records Debezium
-- 3.6.1's records of them; tests/tests/source_postgres_cdc_golden.rs compares ours). TBL is
-- replaced by the table's name (the capture: cdc_golden; the test: a unique name). TBL holds
-- every type connectors/src/cdc/types.rs maps, default replica identity; TBL_full the same
-- columns with REPLICA IDENTITY FULL.
CREATE TYPE TBL_mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE TBL (
  id integer PRIMARY KEY,
  c_int2 smallint,
  c_int4 integer NOT NULL DEFAULT 42,
  c_int8 bigint,
  c_float4 real,
  c_float8 double precision,
  c_bool boolean,
  c_text text,
  c_text_def text DEFAULT 'dflt',
  c_varchar varchar(20),
  c_char char(5),
  c_bytea bytea,
  c_uuid uuid,
  c_json json,
  c_jsonb jsonb,
  c_numeric numeric(10, 3),
  c_numeric_var numeric,
  c_date date,
  c_time3 time(3),
  c_time6 time(6),
  c_timetz timetz,
  c_ts3 timestamp(3),
  c_ts6 timestamp(6),
  c_tstz timestamptz,
  c_interval interval,
  c_enum TBL_mood,
  c_int_arr int[],
  c_text_arr text[]
);
CREATE TABLE TBL_full (LIKE TBL INCLUDING DEFAULTS, PRIMARY KEY (id));
ALTER TABLE TBL_full REPLICA IDENTITY FULL;
-- The snapshot's rows: one of every type, one of nulls (defaults aside), one of edge values.
INSERT INTO TBL VALUES
  (1, 32767, -2147483648, 9223372036854775807, 1.5, -2.25e-10, true, 'hello, wörld', 'x',
   'varchar', 'ab', '\x00ff10', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"a": [1, 2]}',
   '{"b": {"c": null}}', 1234567.891, 3.14159265358979323846, '2024-02-29', '13:45:59.123',
   '23:59:59.999999', '10:15:30.25+02', '2024-01-02 03:04:05.678',
   '1999-12-31 23:59:59.123456', '2024-01-02 03:04:05.1234+01', '1 year 2 mons 3 days 04:05:06.5',
   'happy', '{1,NULL,3}', '{"a b","NULL",NULL,"q\"uote"}'),
  (2, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (3, -32768, 7, -1, 'NaN', 'Infinity', false, '', DEFAULT, '', '', '\x', '00000000-0000-0000-0000-000000000000',
   '[]', '[]', -0.001, 100, '1969-12-31', '00:00:00', '24:00:00', '00:00:00-05:30',
   '1960-06-15 12:00:00', '1970-01-01 00:00:00', '1960-06-15 12:00:00.5-08', '-1 days +02:00:00',
   'sad', '{}', '{}');
INSERT INTO TBL_full SELECT * FROM TBL;
