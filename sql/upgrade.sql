-- The upgrades from every released version (0.1.0, 0.2.0, 0.3.0) to the current one: data
-- written under 0.1.0 (a ulid key with a btree and a hash index, a uuid column whose DEFAULT is
-- 0.1.0's uuidv7(), a view that calls ulid(ts)) survives ALTER EXTENSION ... UPDATE, and each
-- updated catalog is the one a fresh install of the current version makes, object by object
-- and property by property. In a database of its own, so that the other tests keep their
-- extension and nothing of theirs holds this one.
CREATE DATABASE regress_snowflake_upgrade;
\set regress_db :DBNAME
\c regress_snowflake_upgrade
SET timezone = 'UTC';

-- Every object of the extension, one row per object and aspect, with its properties as text
-- (names, never OIDs, so that two installs compare).
CREATE TEMP VIEW extension_catalog AS
WITH members AS (
  SELECT d.classid, d.objid
    FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowflake'
   WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
)
SELECT 'extension' AS kind, e.extname::text AS object,
       concat_ws(' | ', e.extversion, n.nspname, e.extrelocatable::text,
                 coalesce(e.extconfig::text, '-'), coalesce(e.extcondition::text, '-')) AS properties
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
 WHERE e.extname = 'snowflake'
UNION ALL
SELECT 'member', pg_describe_object(m.classid, m.objid, 0),
       concat_ws(' | ', m.classid::regclass::text,
                 'comment=' || coalesce(obj_description(m.objid, m.classid::regclass::text), '-'))
  FROM members m
UNION ALL
SELECT 'depends', pg_describe_object(d.classid, d.objid, d.objsubid),
       pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid) || ' | ' || d.deptype::text
  FROM pg_depend d JOIN members m ON m.classid = d.classid AND m.objid = d.objid
UNION ALL
SELECT 'initial privileges', pg_describe_object(i.classoid, i.objoid, i.objsubid),
       i.privtype::text || ' | ' || i.initprivs::text
  FROM pg_init_privs i JOIN members m ON m.classid = i.classoid AND m.objid = i.objoid
UNION ALL
SELECT 'function', p.oid::regprocedure::text,
       concat_ws(' | ', 'args=' || pg_get_function_arguments(p.oid),
                 'identity=' || pg_get_function_identity_arguments(p.oid),
                 'result=' || coalesce(pg_get_function_result(p.oid), '-'),
                 'kind=' || p.prokind::text, 'volatility=' || p.provolatile::text,
                 'strict=' || p.proisstrict, 'parallel=' || p.proparallel::text,
                 'leakproof=' || p.proleakproof, 'security_definer=' || p.prosecdef,
                 'cost=' || p.procost, 'rows=' || p.prorows, 'retset=' || p.proretset,
                 'language=' || l.lanname, 'src=' || p.prosrc,
                 'bin=' || coalesce(p.probin, '-'), 'config=' || coalesce(p.proconfig::text, '-'),
                 'support=' || p.prosupport::regproc::text,
                 'acl=' || coalesce(p.proacl::text, 'default'),
                 'comment=' || coalesce(obj_description(p.oid, 'pg_proc'), '-'))
  FROM members m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
  JOIN pg_language l ON l.oid = p.prolang
UNION ALL
SELECT 'aggregate', a.aggfnoid::regprocedure::text,
       concat_ws(' | ', a.aggkind::text, a.aggnumdirectargs, a.aggtransfn::regprocedure::text,
                 a.aggfinalfn::regprocedure::text, a.aggcombinefn::regprocedure::text,
                 a.aggserialfn::regprocedure::text, a.aggdeserialfn::regprocedure::text,
                 a.aggmtransfn::regprocedure::text, a.aggminvtransfn::regprocedure::text,
                 a.aggmfinalfn::regprocedure::text, a.aggfinalextra, a.aggmfinalextra,
                 a.aggfinalmodify::text, a.aggmfinalmodify::text, a.aggsortop::regoperator::text,
                 a.aggtranstype::regtype::text, a.aggtransspace, a.aggmtranstype::regtype::text,
                 a.aggmtransspace, coalesce(a.agginitval, '-'), coalesce(a.aggminitval, '-'))
  FROM members m JOIN pg_aggregate a ON m.classid = 'pg_proc'::regclass AND a.aggfnoid = m.objid
UNION ALL
SELECT 'type', t.oid::regtype::text,
       concat_ws(' | ', 'length=' || t.typlen, 'byval=' || t.typbyval, 'type=' || t.typtype::text,
                 'category=' || t.typcategory::text, 'preferred=' || t.typispreferred,
                 'delimiter=' || t.typdelim::text, 'element=' || t.typelem::regtype::text,
                 'array=' || t.typarray::regtype::text,
                 'input=' || t.typinput::regprocedure::text,
                 'output=' || t.typoutput::regprocedure::text,
                 'receive=' || t.typreceive::regprocedure::text,
                 'send=' || t.typsend::regprocedure::text,
                 'typmodin=' || t.typmodin::regprocedure::text,
                 'typmodout=' || t.typmodout::regprocedure::text,
                 'analyze=' || t.typanalyze::regprocedure::text,
                 'subscript=' || t.typsubscript::regprocedure::text,
                 'alignment=' || t.typalign::text, 'storage=' || t.typstorage::text,
                 'notnull=' || t.typnotnull, 'collation=' || t.typcollation,
                 'default=' || coalesce(t.typdefault, '-'),
                 'acl=' || coalesce(t.typacl::text, 'default'),
                 'comment=' || coalesce(obj_description(t.oid, 'pg_type'), '-'))
  FROM pg_type t
 WHERE t.oid IN (SELECT objid FROM members WHERE classid = 'pg_type'::regclass)
    OR t.typelem IN (SELECT objid FROM members WHERE classid = 'pg_type'::regclass)
UNION ALL
SELECT 'cast', format('(%s AS %s)', c.castsource::regtype, c.casttarget::regtype),
       concat_ws(' | ', 'function=' || c.castfunc::regprocedure::text,
                 'context=' || c.castcontext::text, 'method=' || c.castmethod::text,
                 'comment=' || coalesce(obj_description(c.oid, 'pg_cast'), '-'))
  FROM members m JOIN pg_cast c ON m.classid = 'pg_cast'::regclass AND c.oid = m.objid
UNION ALL
SELECT 'operator', o.oid::regoperator::text,
       concat_ws(' | ', 'kind=' || o.oprkind::text, 'result=' || o.oprresult::regtype::text,
                 'code=' || o.oprcode::regprocedure::text,
                 'commutator=' || o.oprcom::regoperator::text,
                 'negator=' || o.oprnegate::regoperator::text,
                 'restrict=' || o.oprrest::regprocedure::text,
                 'join=' || o.oprjoin::regprocedure::text,
                 'hashes=' || o.oprcanhash, 'merges=' || o.oprcanmerge,
                 'comment=' || coalesce(obj_description(o.oid, 'pg_operator'), '-'))
  FROM members m JOIN pg_operator o ON m.classid = 'pg_operator'::regclass AND o.oid = m.objid
UNION ALL
SELECT 'operator class', format('%s using %s', c.opcname, am.amname),
       concat_ws(' | ', 'schema=' || c.opcnamespace::regnamespace::text,
                 'family=' || f.opfname, 'input=' || c.opcintype::regtype::text,
                 'default=' || c.opcdefault, 'key=' || c.opckeytype::regtype::text,
                 'comment=' || coalesce(obj_description(c.oid, 'pg_opclass'), '-'))
  FROM members m JOIN pg_opclass c ON m.classid = 'pg_opclass'::regclass AND c.oid = m.objid
  JOIN pg_am am ON am.oid = c.opcmethod
  JOIN pg_opfamily f ON f.oid = c.opcfamily
UNION ALL
SELECT 'operator family', format('%s using %s', f.opfname, am.amname),
       concat_ws(' | ', 'schema=' || f.opfnamespace::regnamespace::text,
                 'comment=' || coalesce(obj_description(f.oid, 'pg_opfamily'), '-'))
  FROM members m JOIN pg_opfamily f ON m.classid = 'pg_opfamily'::regclass AND f.oid = m.objid
  JOIN pg_am am ON am.oid = f.opfmethod
UNION ALL
SELECT 'family operator', format('%s using %s: strategy %s', f.opfname, am.amname, o.amopstrategy),
       concat_ws(' | ', o.amoplefttype::regtype::text, o.amoprighttype::regtype::text,
                 o.amoppurpose::text, o.amopopr::regoperator::text,
                 coalesce(sf.opfname::text, '-'))
  FROM members m JOIN pg_opfamily f ON m.classid = 'pg_opfamily'::regclass AND f.oid = m.objid
  JOIN pg_am am ON am.oid = f.opfmethod
  JOIN pg_amop o ON o.amopfamily = f.oid
  LEFT JOIN pg_opfamily sf ON sf.oid = o.amopsortfamily
UNION ALL
SELECT 'family function', format('%s using %s: support %s (%s, %s)', f.opfname, am.amname,
                                 p.amprocnum, p.amproclefttype::regtype, p.amprocrighttype::regtype),
       p.amproc::regprocedure::text
  FROM members m JOIN pg_opfamily f ON m.classid = 'pg_opfamily'::regclass AND f.oid = m.objid
  JOIN pg_am am ON am.oid = f.opfmethod
  JOIN pg_amproc p ON p.amprocfamily = f.oid;

---------------------------------------------------------------------------------------------
-- from 0.1.0, with data
CREATE EXTENSION snowflake VERSION '0.1.0';
SELECT extversion FROM pg_extension WHERE extname = 'snowflake';

-- qualified: on PostgreSQL 18 and later a bare uuidv7() is pg_catalog's, not 0.1.0's
CREATE TABLE kept (
  id ulid NOT NULL DEFAULT ulid(),
  u uuid NOT NULL DEFAULT public.uuidv7(),
  s bigint NOT NULL DEFAULT snowflake(),
  n integer NOT NULL
);
CREATE INDEX kept_id_btree ON kept USING btree (id);
CREATE INDEX kept_id_hash ON kept USING hash (id);
INSERT INTO kept (n) SELECT g FROM generate_series(1, 500) g;
INSERT INTO kept (id, n)
  SELECT ulid(timestamptz '2024-02-29 12:00:00+00' + g * interval '1 hour'), 500 + g
    FROM generate_series(1, 500) g;
-- the default really was 0.1.0's generator: the extension's function named uuidv7
SELECT p.proname, p.pronamespace::regnamespace AS schema
  FROM pg_attrdef a JOIN pg_attribute t ON t.attrelid = a.adrelid AND t.attnum = a.adnum
  JOIN pg_depend x ON x.classid = 'pg_attrdef'::regclass AND x.objid = a.oid
                  AND x.refclassid = 'pg_proc'::regclass
  JOIN pg_proc p ON p.oid = x.refobjid
  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
 WHERE a.adrelid = 'kept'::regclass AND t.attname = 'u';
CREATE TABLE kept_before AS SELECT * FROM kept;
CREATE VIEW kept_backfill AS SELECT ulid(timestamptz '2024-02-29 12:00:00+00') AS id;

ALTER EXTENSION snowflake UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'snowflake';

-- the column defaults follow the rename
SELECT t.attname, pg_get_expr(a.adbin, a.adrelid) AS default_expr
  FROM pg_attrdef a JOIN pg_attribute t ON t.attrelid = a.adrelid AND t.attnum = a.adnum
 WHERE a.adrelid = 'kept'::regclass ORDER BY t.attnum;
INSERT INTO kept (n) SELECT 1000 + g FROM generate_series(1, 10) g;
-- and so does a view that called ulid(ts), now ulid_from_time(ts)
SELECT pg_get_viewdef('kept_backfill') LIKE '%ulid_from_time(%' AS calls_ulid_from_time;
SELECT ulid_timestamp(id) AS backfill_time FROM kept_backfill;
SELECT count(*) AS new_rows, bool_and(substr(u::text, 15, 1) = '7') AS v7,
       bool_and(u > ALL (SELECT u FROM kept_before)) AS after_old_ones
  FROM kept WHERE n > 1000;
DELETE FROM kept WHERE n > 1000;

-- the btree index returns every old row, in order
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM kept WHERE id >= '00000000000000000000000000' ORDER BY id;
SELECT (SELECT array_agg(id) FROM (SELECT id FROM kept WHERE id >= '00000000000000000000000000'
                                     ORDER BY id) s)
       = (SELECT array_agg(id ORDER BY id) FROM kept_before) AS btree_same_rows;
-- the hash index finds every old row by its key (the btree index out of the way)
BEGIN;
DROP INDEX kept_id_btree;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT n FROM kept WHERE id = '00000000000000000000000000';
SELECT count(*) AS found, count(*) FILTER (WHERE k.n = b.n AND k.u = b.u AND k.s = b.s) AS equal
  FROM kept_before b JOIN kept k ON k.id = b.id;
ROLLBACK;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- every member is of a kind compared above (a new kind of object needs its own rows here)
SELECT pg_describe_object(d.classid, d.objid, 0) AS member_of_a_kind_not_compared
  FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowflake'
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND d.classid NOT IN ('pg_proc'::regclass, 'pg_type'::regclass, 'pg_cast'::regclass,
                         'pg_operator'::regclass, 'pg_opclass'::regclass,
                         'pg_opfamily'::regclass);

-- each updated catalog is kept in a plain table
CREATE TABLE upgraded_catalog AS SELECT '0.1.0' AS from_version, * FROM extension_catalog;
DROP VIEW kept_backfill;
DROP TABLE kept, kept_before;
DROP EXTENSION snowflake;

---------------------------------------------------------------------------------------------
-- from 0.2.0: 1.0.0 drops uuid_version(), and while a view uses it the update stops with a
-- hint, changing nothing
CREATE EXTENSION snowflake VERSION '0.2.0';
CREATE VIEW versions AS SELECT uuid_version(snowflake_uuidv7()) AS v;
DO $$
DECLARE st text; msg text; hin text;
BEGIN
  ALTER EXTENSION snowflake UPDATE;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, hin = PG_EXCEPTION_HINT;
  RAISE NOTICE '%: %', st, msg;
  RAISE NOTICE 'HINT: %', hin;
END $$;
SELECT extversion FROM pg_extension WHERE extname = 'snowflake';
SELECT v FROM versions;
DROP VIEW versions;
ALTER EXTENSION snowflake UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'snowflake';
SELECT to_regprocedure('uuid_version(uuid)') IS NULL AS uuid_version_gone;
INSERT INTO upgraded_catalog SELECT '0.2.0', * FROM extension_catalog;
DROP EXTENSION snowflake;

---------------------------------------------------------------------------------------------
-- from 0.3.0
CREATE EXTENSION snowflake VERSION '0.3.0';
ALTER EXTENSION snowflake UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'snowflake';
INSERT INTO upgraded_catalog SELECT '0.3.0', * FROM extension_catalog;
DROP EXTENSION snowflake;

---------------------------------------------------------------------------------------------
-- the current version installed afresh
CREATE EXTENSION snowflake;
CREATE TABLE fresh_catalog AS SELECT * FROM extension_catalog;

-- what each side compared (the figures grow with the extension)
SELECT from_version, kind, count(*) > 0 AS compared,
       count(*) = (SELECT count(*) FROM fresh_catalog f WHERE f.kind = u.kind) AS same_count
  FROM upgraded_catalog u GROUP BY from_version, kind ORDER BY from_version, kind COLLATE "C";
SELECT from_version, count(*) >= 150 AS rows_compared FROM upgraded_catalog GROUP BY from_version ORDER BY 1;

-- in an update only, then in the fresh install only: no rows
SELECT v.from_version, 'upgraded only' AS side, s.* FROM (VALUES ('0.1.0'), ('0.2.0'), ('0.3.0')) v(from_version),
  LATERAL (SELECT kind, object, properties FROM upgraded_catalog u WHERE u.from_version = v.from_version
           EXCEPT SELECT * FROM fresh_catalog) s
UNION ALL
SELECT v.from_version, 'fresh only', s.* FROM (VALUES ('0.1.0'), ('0.2.0'), ('0.3.0')) v(from_version),
  LATERAL (SELECT * FROM fresh_catalog
           EXCEPT SELECT kind, object, properties FROM upgraded_catalog u WHERE u.from_version = v.from_version) s
ORDER BY 1, 2, 3, 4, 5;

-- the owner of a database, no superuser, updates the extension it created (it is trusted);
-- the update's check and renames run with the extension's rights, not the owner's
DROP EXTENSION snowflake;
CREATE ROLE regress_snowflake_upgrader;
ALTER DATABASE regress_snowflake_upgrade OWNER TO regress_snowflake_upgrader;
SET ROLE regress_snowflake_upgrader;
CREATE EXTENSION snowflake VERSION '0.2.0';
CREATE TABLE owned (id ulid PRIMARY KEY DEFAULT ulid(), at_time ulid DEFAULT ulid(timestamptz '2024-02-29 12:00:00+00'));
ALTER EXTENSION snowflake UPDATE;
SELECT extversion, extowner::regrole AS owner FROM pg_extension WHERE extname = 'snowflake';
SELECT pg_get_expr(adbin, adrelid) AS default_expr FROM pg_attrdef
 WHERE adrelid = 'owned'::regclass ORDER BY adnum;
DROP TABLE owned;
DROP EXTENSION snowflake;
RESET ROLE;

\c :regress_db
DROP DATABASE regress_snowflake_upgrade;
DROP ROLE regress_snowflake_upgrader;
-- the other tests' extension is untouched
SELECT extversion FROM pg_extension WHERE extname = 'snowflake';
