-- TypeID text: typeid(prefix, id), typeid_uuid(text), typeid_prefix(text). The specification's
-- own examples (its valid.yml and invalid.yml, whose every case the unit tests run), TypeIDs of
-- the extension's UUIDs, and each rule's ERROR: 22P02 with the rule in its DETAIL.
SET timezone = 'UTC';

-- the specification's valid-uuidv7 example, both ways
SELECT typeid('prefix', '01890a5d-ac96-774b-bcce-b302099a8057') AS typeid,
       typeid_uuid('prefix_01h455vb4pex5vsknk084sn02q') AS uuid,
       typeid_prefix('prefix_01h455vb4pex5vsknk084sn02q') AS prefix;

-- an empty prefix: no underscore, the 26-character suffix alone
SELECT typeid('', '00000000-0000-0000-0000-000000000000') AS nil,
       typeid('', 'ffffffff-ffff-ffff-ffff-ffffffffffff') AS max,
       typeid_uuid('7zzzzzzzzzzzzzzzzzzzzzzzzz') AS max_uuid,
       typeid_prefix('7zzzzzzzzzzzzzzzzzzzzzzzzz') = '' AS empty_prefix;

-- every case of the specification's valid.yml, encoded and decoded
SELECT name, typeid(prefix, id::uuid) = t AS encodes, typeid_uuid(t) = id::uuid AS decodes,
       typeid_prefix(t) = prefix AS prefix_back
  FROM (VALUES
    ('nil', '00000000000000000000000000', '', '00000000-0000-0000-0000-000000000000'),
    ('one', '00000000000000000000000001', '', '00000000-0000-0000-0000-000000000001'),
    ('ten', '0000000000000000000000000a', '', '00000000-0000-0000-0000-00000000000a'),
    ('sixteen', '0000000000000000000000000g', '', '00000000-0000-0000-0000-000000000010'),
    ('thirty-two', '00000000000000000000000010', '', '00000000-0000-0000-0000-000000000020'),
    ('max-valid', '7zzzzzzzzzzzzzzzzzzzzzzzzz', '', 'ffffffff-ffff-ffff-ffff-ffffffffffff'),
    ('valid-alphabet', 'prefix_0123456789abcdefghjkmnpqrs', 'prefix', '0110c853-1d09-52d8-d73e-1194e95b5f19'),
    ('valid-uuidv7', 'prefix_01h455vb4pex5vsknk084sn02q', 'prefix', '01890a5d-ac96-774b-bcce-b302099a8057'),
    ('prefix-underscore', 'pre_fix_00000000000000000000000000', 'pre_fix', '00000000-0000-0000-0000-000000000000')
  ) AS v(name, t, prefix, id);

-- a user's TypeID from a new UUIDv7, and back; within one prefix, TypeIDs sort as their UUIDs
CREATE TEMP TABLE typeid_users AS
  SELECT snowflake_uuidv7() AS id FROM generate_series(1, 1000);
SELECT count(*) AS users,
       count(*) FILTER (WHERE typeid_uuid(typeid('user', id)) = id
                          AND typeid_prefix(typeid('user', id)) = 'user'
                          AND typeid('user', id) ~ '^user_[0-7][0-9a-hjkmnp-tv-z]{25}$') AS round_trips
  FROM typeid_users;
SELECT array_agg(id ORDER BY id) = array_agg(id ORDER BY typeid('user', id) COLLATE "C") AS same_order
  FROM typeid_users;

-- the longest prefix (63 characters), and underscores inside one
SELECT length(typeid(repeat('a', 63), '01890a5d-ac96-774b-bcce-b302099a8057')) AS longest,
       typeid('my__type', '01890a5d-ac96-774b-bcce-b302099a8057') AS consecutive,
       typeid_prefix('a_b_c_01h455vb4pex5vsknk084sn02q') AS inner_underscores;

-- every case of the specification's invalid.yml: refused by both readers, with the rule
CREATE FUNCTION pg_temp.refusal(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE detail text;
BEGIN
  EXECUTE q;
  RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
  RETURN SQLSTATE || ': ' || detail;
END $$;
SELECT name, pg_temp.refusal(format('SELECT typeid_uuid(%L)', t)) AS refusal,
       pg_temp.refusal(format('SELECT typeid_uuid(%L)', t))
         = pg_temp.refusal(format('SELECT typeid_prefix(%L)', t)) AS prefix_same
  FROM (VALUES
    ('prefix-uppercase', 'PREFIX_00000000000000000000000000'),
    ('prefix-numeric', '12345_00000000000000000000000000'),
    ('prefix-period', 'pre.fix_00000000000000000000000000'),
    ('prefix-non-ascii', 'préfix_00000000000000000000000000'),
    ('prefix-spaces', '  prefix_00000000000000000000000000'),
    ('prefix-64-chars', 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl_00000000000000000000000000'),
    ('separator-empty-prefix', '_00000000000000000000000000'),
    ('separator-empty', '_'),
    ('suffix-short', 'prefix_1234567890123456789012345'),
    ('suffix-long', 'prefix_123456789012345678901234567'),
    ('suffix-spaces', 'prefix_1234567890123456789012345 '),
    ('suffix-uppercase', 'prefix_0123456789ABCDEFGHJKMNPQRS'),
    ('suffix-hyphens', 'prefix_123456789-123456789-123456'),
    ('suffix-wrong-alphabet', 'prefix_ooooooiiiiiiuuuuuuulllllll'),
    ('suffix-ambiguous-crockford', 'prefix_i23456789ol23456789oi23456'),
    ('suffix-hyphens-crockford', 'prefix_123456789-0123456789-0123456'),
    ('suffix-overflow', 'prefix_8zzzzzzzzzzzzzzzzzzzzzzzzz'),
    ('prefix-underscore-start', '_prefix_00000000000000000000000000'),
    ('prefix-underscore-end', 'prefix__00000000000000000000000000'),
    ('empty', ''),
    ('prefix-empty', 'prefix_')
  ) AS v(name, t);

-- the ERROR as a client sees it
SELECT typeid_uuid('prefix__00000000000000000000000000');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT typeid_prefix('prefix_8zzzzzzzzzzzzzzzzzzzzzzzzz');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT typeid_uuid('user_01H455VB4PEX5VSKNK084SN02Q');
\echo SQLSTATE :LAST_ERROR_SQLSTATE

-- a bad prefix given to typeid() is refused as one read
SELECT typeid('User', '01890a5d-ac96-774b-bcce-b302099a8057');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT typeid('user_', '01890a5d-ac96-774b-bcce-b302099a8057');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT prefix, pg_temp.refusal(format('SELECT typeid(%L, %L::uuid)', prefix,
                                      '01890a5d-ac96-774b-bcce-b302099a8057')) AS refusal
  FROM (VALUES ('_user'), ('us3r'), ('us er'), (repeat('a', 64)), ('_')) AS v(prefix);

-- NULL in, NULL out
SELECT typeid(NULL, '01890a5d-ac96-774b-bcce-b302099a8057') IS NULL AS a,
       typeid('user', NULL) IS NULL AS b, typeid_uuid(NULL) IS NULL AS c,
       typeid_prefix(NULL) IS NULL AS d;

-- IMMUTABLE STRICT PARALLEL SAFE
SELECT p.oid::regprocedure AS function, p.provolatile, p.proisstrict, p.proparallel
  FROM pg_proc p
 WHERE p.proname IN ('typeid', 'typeid_uuid', 'typeid_prefix')
 ORDER BY p.oid::regprocedure::text COLLATE "C";
