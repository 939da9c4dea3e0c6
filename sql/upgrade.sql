-- Upgrade equals fresh install: every way to reach the default version leaves the catalog a
-- fresh install of it makes, object by object and property by property. The ways are read
-- from the server: each version pg_available_extension_versions offers and each update path
-- of pg_extension_update_paths() that ends at the default version, so that a new upgrade
-- script is taken up by itself (CONTRIBUTING.md, "Releases and upgrade scripts"). 1.0.0 is
-- the first release: one version, no path. The comparison also runs on a way that exists
-- today, an install moved to another schema and back, and on an install changed on purpose,
-- which it must report. In a database of its own, so that the other tests keep their
-- extension and nothing of theirs holds this one.
CREATE DATABASE regress_snowflake_upgrade;
\set regress_db :DBNAME
\c regress_snowflake_upgrade
SET timezone = 'UTC';
-- Everything runs as the database's owner, no superuser, as a trusted extension is created
-- and updated (the extension's owner holds the grant option of what is not PUBLIC's: a
-- superuser's install differs in that alone).
CREATE ROLE regress_snowflake_upgrader;
ALTER DATABASE regress_snowflake_upgrade OWNER TO regress_snowflake_upgrader;
SET ROLE regress_snowflake_upgrader;

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
-- The versions this installation can create, and the update paths that end at the default
-- version (a new release adds its rows here, CONTRIBUTING.md says how).
CREATE TEMP VIEW default_version AS
SELECT default_version AS version FROM pg_available_extensions WHERE name = 'snowflake';
SELECT v.version, v.version = d.version AS is_default, v.superuser, v.trusted, v.relocatable,
       v.schema, v.requires
  FROM pg_available_extension_versions v, default_version d
 WHERE v.name = 'snowflake' ORDER BY string_to_array(v.version, '.')::int[];
CREATE TEMP VIEW paths_to_default AS
SELECT p.source, p.path
  FROM pg_extension_update_paths('snowflake') p, default_version d
 WHERE p.target = d.version AND p.path IS NOT NULL;
SELECT source, path FROM paths_to_default ORDER BY string_to_array(source, '.')::int[];
-- every version that can be created reaches the default one: no rows
SELECT v.version AS cannot_reach_the_default
  FROM pg_available_extension_versions v, default_version d
 WHERE v.name = 'snowflake' AND v.version <> d.version
   AND v.version NOT IN (SELECT source FROM paths_to_default);

-- Each way's catalog, kept in a plain table.
CREATE TABLE reached (way text, kind text, object text, properties text);

-- Every path: create its first version, update, keep the catalog. A version this
-- installation cannot create is an ERROR here (a released install script the tests were not
-- given, CONTRIBUTING.md).
DO $$
DECLARE
  v text;
BEGIN
  FOR v IN SELECT source FROM paths_to_default ORDER BY string_to_array(source, '.')::int[] LOOP
    EXECUTE format('CREATE EXTENSION snowflake VERSION %L', v);
    ALTER EXTENSION snowflake UPDATE;
    INSERT INTO reached SELECT 'updated from ' || v, * FROM extension_catalog;
    DROP EXTENSION snowflake;
  END LOOP;
END $$;

-- Created in another schema and moved to public (the extension is relocatable; by a
-- superuser: the members of a trusted extension are the bootstrap superuser's).
CREATE SCHEMA regress_elsewhere;
CREATE EXTENSION snowflake SCHEMA regress_elsewhere;
RESET ROLE;
ALTER EXTENSION snowflake SET SCHEMA public;
SET ROLE regress_snowflake_upgrader;
INSERT INTO reached SELECT 'moved to public', * FROM extension_catalog;
DROP EXTENSION snowflake;
DROP SCHEMA regress_elsewhere;

-- Changed on purpose: one comment, which the comparison must report on both sides.
CREATE EXTENSION snowflake;
RESET ROLE;
COMMENT ON FUNCTION snowflake() IS 'changed on purpose';
SET ROLE regress_snowflake_upgrader;
INSERT INTO reached SELECT 'changed on purpose', * FROM extension_catalog;
DROP EXTENSION snowflake;

---------------------------------------------------------------------------------------------
-- The default version installed afresh.
CREATE EXTENSION snowflake;
SELECT extversion, extowner::regrole AS owner FROM pg_extension WHERE extname = 'snowflake';
CREATE TABLE fresh_catalog AS SELECT * FROM extension_catalog;

-- every member is of a kind compared above (a new kind of object needs its own rows here)
SELECT pg_describe_object(d.classid, d.objid, 0) AS member_of_a_kind_not_compared
  FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowflake'
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND d.classid NOT IN ('pg_proc'::regclass, 'pg_type'::regclass, 'pg_cast'::regclass,
                         'pg_operator'::regclass, 'pg_opclass'::regclass,
                         'pg_opfamily'::regclass);

-- what is compared (the figures grow with the extension), and each way has as many rows of
-- each kind
SELECT kind, count(*) > 0 AS compared FROM fresh_catalog GROUP BY kind ORDER BY kind COLLATE "C";
SELECT (SELECT count(*) FROM fresh_catalog) >= 150 AS rows_compared;
SELECT w.way, bool_and(r.n IS NOT DISTINCT FROM f.n) AS same_counts
  FROM (SELECT DISTINCT way FROM reached) w
  CROSS JOIN (SELECT kind, count(*) AS n FROM fresh_catalog GROUP BY kind) f
  LEFT JOIN (SELECT way, kind, count(*) AS n FROM reached GROUP BY way, kind) r
         ON r.way = w.way AND r.kind = f.kind
 GROUP BY w.way ORDER BY w.way COLLATE "C";

-- in a way only, then in the fresh install only: the change made on purpose alone
SELECT w.way, 'reached only' AS side, s.* FROM (SELECT DISTINCT way FROM reached) w,
  LATERAL (SELECT kind, object, properties FROM reached r WHERE r.way = w.way
           EXCEPT SELECT * FROM fresh_catalog) s
UNION ALL
SELECT w.way, 'fresh only', s.* FROM (SELECT DISTINCT way FROM reached) w,
  LATERAL (SELECT * FROM fresh_catalog
           EXCEPT SELECT kind, object, properties FROM reached r WHERE r.way = w.way) s
ORDER BY 1, 2, 3, 4, 5;

DROP EXTENSION snowflake;
RESET ROLE;
\c :regress_db
DROP DATABASE regress_snowflake_upgrade;
DROP ROLE regress_snowflake_upgrader;
-- the other tests' extension is untouched
SELECT extversion FROM pg_extension WHERE extname = 'snowflake';
