-- The tables the append touches, as src/postgres/pg_schema.cc creates them (the leases table
-- cut to the columns the fence reads), and the floor's table of bench/postgres_bench.cc.
DROP SCHEMA IF EXISTS loom_statement_bench CASCADE;
CREATE SCHEMA loom_statement_bench;
SET search_path TO loom_statement_bench;
CREATE TABLE floor (id bigserial PRIMARY KEY, body bytea NOT NULL);
CREATE TABLE executions (
  id text COLLATE "C" PRIMARY KEY, workflow text COLLATE "C" NOT NULL, subject text COLLATE "C",
  status text NOT NULL, started_at bigint NOT NULL, ended_at bigint, next_seq bigint NOT NULL,
  steps bigint NOT NULL, log_bytes bigint NOT NULL, state_bytes bigint NOT NULL,
  header_bytes bigint NOT NULL, steps_bytes bigint NOT NULL, steps_count bigint NOT NULL,
  signals_bytes bigint NOT NULL, signals_count bigint NOT NULL, input_bytes bigint NOT NULL,
  result_bytes bigint NOT NULL);
CREATE INDEX ON executions (workflow);
CREATE INDEX ON executions (subject);
CREATE INDEX ON executions (status);
CREATE TABLE events (execution_id text COLLATE "C" NOT NULL, seq bigint NOT NULL,
                     body bytea NOT NULL, checksum bigint NOT NULL,
                     PRIMARY KEY (execution_id, seq));
CREATE TABLE leases (execution_id text COLLATE "C" PRIMARY KEY, owner_id text NOT NULL,
                     token bigint NOT NULL, released boolean NOT NULL);
INSERT INTO executions VALUES ('e1', 'w', NULL, 'running', 1, NULL, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
INSERT INTO leases VALUES ('e1', 'o', 1, false);
