-- The change set of the Debezium golden records, applied once the snapshot is done (see
-- golden-schema.sql), one statement a transaction.
INSERT INTO TBL (id, c_int2, c_int8, c_text, c_numeric, c_numeric_var, c_ts6, c_tstz, c_interval, c_enum, c_int_arr, c_text_arr) VALUES (10, 5, 50, 'new', 0, -12.345, '2020-05-05 05:05:05.000001', '2020-05-05 05:05:05+00', '00:00:01', 'ok', '{7}', '{x}');
UPDATE TBL SET c_text = 'updated', c_int4 = 43, c_numeric_var = 1e-3, c_tstz = '2021-01-01 00:00:00.000001+00' WHERE id = 10;
UPDATE TBL SET id = 11 WHERE id = 10;
DELETE FROM TBL WHERE id = 11;
UPDATE TBL SET c_bool = NOT c_bool, c_bytea = '\xdeadbeef' WHERE id = 1;
DELETE FROM TBL WHERE id = 2;
INSERT INTO TBL_full (id, c_text, c_enum) VALUES (10, 'new', 'sad');
UPDATE TBL_full SET c_text = 'updated', c_date = '2000-01-01' WHERE id = 10;
UPDATE TBL_full SET id = 11 WHERE id = 10;
DELETE FROM TBL_full WHERE id = 11;
UPDATE TBL_full SET c_float4 = 2.5, c_jsonb = '{"z": 1}' WHERE id = 1;
DELETE FROM TBL_full WHERE id = 3;
