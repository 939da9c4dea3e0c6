-- Masking: snowflake_mask() and snowflake_unmask(), sno_mask() and sno_unmask(), ulid_mask()
-- and ulid_unmask(), with keys the owner adds, through pgcrypto (hmac, encrypt, decrypt).
-- The tokens are the C extension's byte for byte under the same key (docs/internals.md,
-- "Masking"; src/core/mask.cpp): a key file of the C extension and the keys added here give the
-- same tokens, each side unmasks the other's. uuidv7_mask and uuidv47_mask are not offered:
-- they need SipHash-2-4, which pgcrypto lacks (docs/managed.md, "Masking").
--
-- pgcrypto is needed for masking alone: the rest of the edition installs and runs without it.
-- Three wrappers (snowflake_mask_hmac, _aes_encrypt, _aes_decrypt) are the only calls into it,
-- bound to pgcrypto's functions in whatever schema pgcrypto is (Supabase: extensions) by
-- snowflake_mask_use_pgcrypto(); without pgcrypto they refuse with 55000.

-- the keys: only the owner reads them

CREATE TABLE snowflake_mask_keys (
	key_id integer PRIMARY KEY CHECK (key_id BETWEEN 0 AND 255),
	active boolean NOT NULL DEFAULT false,
	key_byte bytea NOT NULL CHECK (octet_length(key_byte) = 1),
	bigint_key bytea NOT NULL CHECK (octet_length(bigint_key) = 32),
	bigint_prefix_key bytea NOT NULL CHECK (octet_length(bigint_prefix_key) = 32),
	bigint_tail bytea NOT NULL CHECK (octet_length(bigint_tail) = 8),
	sno_key bytea NOT NULL CHECK (octet_length(sno_key) = 32),
	sno_prefix_key bytea NOT NULL CHECK (octet_length(sno_prefix_key) = 32),
	sno_tail bytea NOT NULL CHECK (octet_length(sno_tail) = 6),
	ulid_key bytea NOT NULL CHECK (octet_length(ulid_key) = 32),
	fingerprint bytea NOT NULL CHECK (octet_length(fingerprint) = 32),
	added timestamptz NOT NULL DEFAULT now()
);
-- at most one active key (snowflake_mask_key_add and _remove keep exactly one while any exists)
CREATE UNIQUE INDEX snowflake_mask_keys_one_active ON snowflake_mask_keys (active) WHERE active;
REVOKE ALL ON TABLE snowflake_mask_keys FROM PUBLIC;
COMMENT ON TABLE snowflake_mask_keys IS 'the mask keys, readable by the owner alone (and by superuser-like roles of the service, and in dumps): per key id (0 to 255), the keys derived from its 256-bit master key K as the C extension derives them, HMAC-SHA256(K, label) for the labels ''snowflake mask bigint v1'', ''snowflake mask bigint prefix v1'', ''snowflake mask sno v1'', ''snowflake mask sno prefix v1'', ''snowflake mask ulid v1'' and ''snowflake mask fingerprint v1'' (docs/internals.md, Masking); bigint_tail and sno_tail are the key id byte and the check of the empty prefix. K itself is not kept. Written only by snowflake_mask_key_add() and snowflake_mask_key_remove()';

-- the calls into pgcrypto

CREATE FUNCTION snowflake_mask_no_pgcrypto() RETURNS bytea
LANGUAGE plpgsql VOLATILE PARALLEL SAFE AS $$
BEGIN
	RAISE EXCEPTION 'masking needs pgcrypto, which is not installed in this database'
		USING ERRCODE = '55000',
		HINT = 'CREATE EXTENSION pgcrypto (a database owner may), then, as the owner of the edition, SELECT snowflake_mask_use_pgcrypto().';
END
$$;
COMMENT ON FUNCTION snowflake_mask_no_pgcrypto() IS 'internal: what the pgcrypto wrappers call until snowflake_mask_use_pgcrypto() binds them; raises 55000';

-- Until bound, each wrapper refuses; snowflake_mask_use_pgcrypto() replaces its body.
CREATE FUNCTION snowflake_mask_hmac(data bytea, key bytea) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN snowflake_mask_no_pgcrypto();
COMMENT ON FUNCTION snowflake_mask_hmac(bytea, bytea) IS 'internal: HMAC-SHA256(key, data), 32 bytes, by pgcrypto''s hmac(); 55000 until snowflake_mask_use_pgcrypto() binds it';
CREATE FUNCTION snowflake_mask_aes_encrypt(block bytea, key bytea) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN snowflake_mask_no_pgcrypto();
COMMENT ON FUNCTION snowflake_mask_aes_encrypt(bytea, bytea) IS 'internal: AES-256-ECB without padding of one 16-byte block under a 32-byte key, by pgcrypto''s encrypt(); 55000 until snowflake_mask_use_pgcrypto() binds it';
CREATE FUNCTION snowflake_mask_aes_decrypt(block bytea, key bytea) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN snowflake_mask_no_pgcrypto();
COMMENT ON FUNCTION snowflake_mask_aes_decrypt(bytea, bytea) IS 'internal: the inverse of snowflake_mask_aes_encrypt(), by pgcrypto''s decrypt(); 55000 until snowflake_mask_use_pgcrypto() binds it';

-- Writes the wrappers again as calls of pgcrypto's functions, named by their exact signatures
-- in pgcrypto's schema: bound when written (RETURN bodies), so no search_path plays a part
-- afterwards, and DROP EXTENSION pgcrypto refuses while they use it.
CREATE FUNCTION snowflake_mask_use_pgcrypto() RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER PARALLEL UNSAFE AS $$
DECLARE
	crypto name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
		WHERE e.extname = 'pgcrypto');
	here name := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.oid = 'snowflake_mask_keys'::regclass);
	f text;
BEGIN
	PERFORM snowflake_refuse_open_schema();
	IF crypto IS NULL THEN
		PERFORM snowflake_mask_no_pgcrypto();
	END IF;
	-- pgcrypto's own members, not a function of the same name that another role put there
	FOREACH f IN ARRAY ARRAY['hmac(bytea,bytea,text)', 'encrypt(bytea,bytea,text)', 'decrypt(bytea,bytea,text)'] LOOP
		IF NOT EXISTS (SELECT FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
				WHERE d.classid = 'pg_proc'::regclass AND d.refclassid = 'pg_extension'::regclass
					AND d.deptype = 'e' AND e.extname = 'pgcrypto'
					AND d.objid = to_regprocedure(format('%I.%s', crypto, f))) THEN
			RAISE EXCEPTION 'pgcrypto in schema % has no function %', crypto, f USING ERRCODE = '55000';
		END IF;
	END LOOP;
	EXECUTE format('CREATE OR REPLACE FUNCTION %I.snowflake_mask_hmac(data bytea, key bytea) RETURNS bytea
		LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN %I.hmac(data, key, %L::text)', here, crypto, 'sha256');
	EXECUTE format('CREATE OR REPLACE FUNCTION %I.snowflake_mask_aes_encrypt(block bytea, key bytea) RETURNS bytea
		LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN %I.encrypt(block, key, %L::text)', here, crypto, 'aes-ecb/pad:none');
	EXECUTE format('CREATE OR REPLACE FUNCTION %I.snowflake_mask_aes_decrypt(block bytea, key bytea) RETURNS bytea
		LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN %I.decrypt(block, key, %L::text)', here, crypto, 'aes-ecb/pad:none');
	-- pgcrypto sizes AES by the key: 32 bytes must give AES-256 (FIPS-197, appendix C.3)
	IF snowflake_mask_aes_encrypt('\x00112233445566778899aabbccddeeff'::bytea,
			'\x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f'::bytea)
			<> '\x8ea2b7ca516745bfeafc49904b496089'::bytea THEN
		RAISE EXCEPTION 'pgcrypto''s AES does not give AES-256 for a 32-byte key' USING ERRCODE = '55000';
	END IF;
	RETURN crypto;
END
$$;
REVOKE ALL ON FUNCTION snowflake_mask_use_pgcrypto() FROM PUBLIC;
COMMENT ON FUNCTION snowflake_mask_use_pgcrypto() IS 'binds the mask functions to pgcrypto (hmac, encrypt, decrypt) in the schema it is installed in, and returns that schema; run by the install when pgcrypto is there, else by the owner after CREATE EXTENSION pgcrypto (or after moving it to another schema). 55000 when pgcrypto is not installed. The owner''s alone';

DO $$
BEGIN
	IF EXISTS (SELECT FROM pg_extension WHERE extname = 'pgcrypto') THEN
		PERFORM snowflake_mask_use_pgcrypto();
	END IF;
END
$$;

-- tokens: 26 characters of lower-case Crockford base32 of one AES block (a ULID's text)

-- A block's 128 bits as two bigints, hi (bytes 0 to 7) and lo (8 to 15), and back; character
-- k of the 26 (k = 0 to 25, 5 bits each, the first 3) ends at bit 5k + 3 of the 128, counted
-- from the most significant. Each is one expression written out at install (no loop),
-- inlined into the caller: about 6 us for the 26 characters, a quarter of a loop's cost.
DO $$
DECLARE
	alphabet constant text := '0123456789abcdefghjkmnpqrstvwxyz';
	-- the 5 bits of character k, from hi and lo
	enc text := (SELECT string_agg(format('substr(%L, (%s)::integer + 1, 1)', alphabet,
			CASE WHEN k = 0 THEN '(hi >> 61) & 7'
				WHEN 5 * k + 3 <= 64 THEN format('(hi >> %s) & 31', 64 - (5 * k + 3))
				WHEN k = 13 THEN '((hi & 1) << 4) | ((lo >> 60) & 15)'
				ELSE format('(lo >> %s) & 31', 128 - (5 * k + 3)) END),
		E'\n\t\t|| ' ORDER BY k) FROM generate_series(0, 25) k);
	-- v is the 26 characters translated to the bytes 33 to 64 (0 to 31 plus 33)
	dec_hi text := (SELECT string_agg(CASE WHEN k = 13 THEN '((get_byte(v, 13) - 33)::bigint >> 4)'
			ELSE format('((get_byte(v, %s) - 33)::bigint << %s)', k, 64 - (5 * k + 3)) END,
		E'\n\t\t| ' ORDER BY k) FROM generate_series(0, 13) k);
	dec_lo text := (SELECT string_agg(CASE WHEN k = 13 THEN '(((get_byte(v, 13) - 33) & 15)::bigint << 60)'
			ELSE format('((get_byte(v, %s) - 33)::bigint << %s)', k, 128 - (5 * k + 3)) END,
		E'\n\t\t| ' ORDER BY k) FROM generate_series(13, 25) k);
BEGIN
	EXECUTE format('CREATE FUNCTION snowflake_mask_base32(hi bigint, lo bigint) RETURNS text
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN %s', enc);
	EXECUTE format('CREATE FUNCTION snowflake_mask_base32_block(v bytea) RETURNS bytea
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN int8send(%s)
		|| int8send(%s)', dec_hi, dec_lo);
END
$$;
COMMENT ON FUNCTION snowflake_mask_base32(bigint, bigint) IS 'internal: the 26 characters of lower-case Crockford base32 of the 128 bits hi (most significant) and lo, as the C extension''s ulid_encode_lower';
COMMENT ON FUNCTION snowflake_mask_base32_block(bytea) IS 'internal: the 16 bytes of 26 characters of Crockford base32 already checked and translated to the bytes 33 to 64 (a character''s value plus 33)';

-- the prefix rule of TypeID and of the C extension's check_mask_prefix
CREATE FUNCTION snowflake_mask_prefix_ok(prefix text) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN prefix COLLATE "C" ~ '^([a-z]([a-z_]{0,61}[a-z])?)?$';
COMMENT ON FUNCTION snowflake_mask_prefix_ok(text) IS 'internal: whether prefix is empty or at most 63 of a-z and _, not first or last (the TypeID specification''s type prefix)';

CREATE FUNCTION snowflake_mask_bad_prefix(prefix text) RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
	RAISE EXCEPTION 'invalid token prefix "%"', prefix USING ERRCODE = '22023',
		DETAIL = 'A prefix is at most 63 characters of a to z and the underscore, and does not start or end with an underscore.';
END
$$;
COMMENT ON FUNCTION snowflake_mask_bad_prefix(text) IS 'internal: raises 22023 for a prefix argument outside TypeID''s rule, as the C extension';

CREATE FUNCTION snowflake_mask_no_key() RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
	RAISE EXCEPTION 'no mask key is loaded' USING ERRCODE = '55000',
		DETAIL = 'snowflake_mask_keys holds no key.',
		HINT = 'Add one, as the owner of the edition: SELECT snowflake_mask_key_add(0, <64 hex digits>, true).';
END
$$;
COMMENT ON FUNCTION snowflake_mask_no_key() IS 'internal: raises 55000 when no mask key has been added, as the C extension does without a key file';

-- The body of a token as the C extension's split_mask_token reads it, after checking that it
-- carries exactly the prefix expected: 16 bytes, or 22P02 with the C extension's message.
CREATE FUNCTION snowflake_mask_token_body(token text, expected text, kind text) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
	t text := lower(token COLLATE "C");
	body text := substring(t FROM '[^_]*$');
	prefix text := coalesce(substring(t FROM '^(.*)_'), '');
	problem text;
	v bytea;
BEGIN
	IF octet_length(body) <> 26 THEN
		problem := 'A token is 26 characters, after its prefix and an underscore if it has one.';
	ELSIF octet_length(prefix) > 63 OR (strpos(t, '_') > 0 AND (prefix = '' OR NOT snowflake_mask_prefix_ok(prefix))) THEN
		problem := 'A prefix is at most 63 characters of a to z and the underscore, and does not start or end with an underscore.';
	ELSIF body !~ '^[0-9a-hjkmnp-tv-z]{26}$' THEN
		problem := 'A token uses the characters 0-9 and a-z without i, l, o and u, in either case.';
	ELSIF left(body, 1) COLLATE "C" > '7' THEN
		problem := 'The first character of a token, after its prefix, is at most 7.';
	END IF;
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid % token: "%"', kind,
			left(token, 100) || CASE WHEN length(token) > 100 THEN '...' ELSE '' END
			USING ERRCODE = '22P02', DETAIL = problem;
	END IF;
	IF prefix <> expected THEN
		IF expected = '' THEN
			RAISE EXCEPTION '% token has the prefix "%", and none was given', kind, prefix USING ERRCODE = '22P02',
				HINT = pg_catalog.format('Give the prefix the token must carry: %s_unmask(token, %L).', kind, prefix);
		ELSIF prefix = '' THEN
			RAISE EXCEPTION '% token has no prefix, not "%"', kind, expected USING ERRCODE = '22P02';
		END IF;
		RAISE EXCEPTION '% token has the prefix "%", not "%"', kind, prefix, expected USING ERRCODE = '22P02';
	END IF;
	v := pg_catalog.convert_to(translate(body, '0123456789abcdefghjkmnpqrstvwxyz', '!"#$%&''()*+,-./0123456789:;<=>?@'), 'UTF8'::name);
	RETURN snowflake_mask_base32_block(v);
END
$$;
COMMENT ON FUNCTION snowflake_mask_token_body(text, text, text) IS 'internal: the 16 bytes of a token''s 26 characters (either case), which must carry exactly the prefix expected (empty for none); 22P02 otherwise, with the C extension''s messages for kind (snowflake, sno)';

CREATE FUNCTION snowflake_mask_not_authentic(token text, kind text) RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
	RAISE EXCEPTION 'invalid % token: "%"', kind,
		left(token, 100) || CASE WHEN length(token) > 100 THEN '...' ELSE '' END
		USING ERRCODE = '22P02',
		DETAIL = 'No key of snowflake_mask_keys made this token with this prefix: it was changed or mistyped, or its key has been removed.';
END
$$;
COMMENT ON FUNCTION snowflake_mask_not_authentic(text, text) IS 'internal: raises 22P02 for a token that no key made with its prefix, as the C extension';

-- 64-bit tokens

-- The masks run as the owner, called by any role, and resolve names when they run (PL/pgSQL):
-- the functions of pg_catalog that one of exact types elsewhere would win over (array_agg,
-- polymorphic; format, variadic) are named with pg_catalog.
CREATE FUNCTION snowflake_mask(id bigint, prefix text DEFAULT '') RETURNS text
LANGUAGE plpgsql STABLE STRICT SECURITY DEFINER PARALLEL RESTRICTED AS $$
DECLARE
	block bytea;
	hi bigint;
	lo bigint;
BEGIN
	IF prefix <> '' AND NOT snowflake_mask_prefix_ok(prefix) THEN
		PERFORM snowflake_mask_bad_prefix(prefix);
	END IF;
	SELECT snowflake_mask_aes_encrypt(int8send(id) || CASE WHEN prefix = '' THEN k.bigint_tail
			ELSE k.key_byte || substr(snowflake_mask_hmac(pg_catalog.convert_to(prefix, 'UTF8'::name), k.bigint_prefix_key), 1, 7) END,
			k.bigint_key)
		INTO block FROM snowflake_mask_keys k WHERE k.active;
	IF block IS NULL THEN
		PERFORM snowflake_mask_no_key();
	END IF;
	hi := ('x' || encode(substr(block, 1, 8), 'hex'))::bit(64)::bigint;
	lo := ('x' || encode(substr(block, 9), 'hex'))::bit(64)::bigint;
	RETURN CASE WHEN prefix = '' THEN '' ELSE prefix || '_' END || snowflake_mask_base32(hi, lo);
END
$$;
COMMENT ON FUNCTION snowflake_mask(bigint, text) IS 'a 26-character token for an ID (with prefix_ before it if given) under the active key of snowflake_mask_keys: no time, shard or order can be read from it. The C extension''s token byte for byte under the same key: AES-256-ECB of the ID (8 bytes big endian), the key id and 7 bytes of HMAC-SHA256 of the prefix, in lower-case Crockford base32 (docs/internals.md, Masking). 22023 for a prefix outside TypeID''s rule (at most 63 of a-z and _, not first or last), 55000 with no key or without pgcrypto';

CREATE FUNCTION snowflake_unmask(token text, prefix text DEFAULT '') RETURNS bigint
LANGUAGE plpgsql STABLE STRICT SECURITY DEFINER PARALLEL RESTRICTED AS $$
DECLARE
	body bytea;
	found bytea;
	keys integer;
BEGIN
	IF prefix <> '' AND NOT snowflake_mask_prefix_ok(prefix) THEN
		PERFORM snowflake_mask_bad_prefix(prefix);
	END IF;
	body := snowflake_mask_token_body(token, prefix, 'snowflake');
	-- every key tried, whichever made the token, as the C extension does; the active first
	SELECT (pg_catalog.array_agg(substr(b.block, 1, 8) ORDER BY k.active DESC, k.key_id)
			FILTER (WHERE substr(b.block, 9) = CASE WHEN prefix = '' THEN k.bigint_tail
				ELSE k.key_byte || substr(snowflake_mask_hmac(pg_catalog.convert_to(prefix, 'UTF8'::name), k.bigint_prefix_key), 1, 7) END))[1],
			count(*)
		INTO found, keys
		FROM snowflake_mask_keys k, LATERAL (SELECT snowflake_mask_aes_decrypt(body, k.bigint_key) AS block) b;
	IF keys = 0 THEN
		PERFORM snowflake_mask_no_key();
	END IF;
	IF found IS NULL THEN
		PERFORM snowflake_mask_not_authentic(token, 'snowflake');
	END IF;
	RETURN ('x' || encode(found, 'hex'))::bit(64)::bigint;
END
$$;
COMMENT ON FUNCTION snowflake_unmask(text, text) IS 'the ID of a token made by snowflake_mask() (here or by the C extension under the same key) with any key of snowflake_mask_keys, which must carry exactly prefix (none when not given; the token''s case does not matter); a changed, truncated or forged token, or one of another prefix, is 22P02; 22023 for a prefix outside TypeID''s rule, 55000 with no key or without pgcrypto';

-- sno tokens: a sno is kept as its 10 bytes (bytea)

CREATE FUNCTION snowflake_mask_sno_bytes(id bytea) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
	IF octet_length(id) <> 10 THEN
		RAISE EXCEPTION 'a sno is 10 bytes, not %', octet_length(id) USING ERRCODE = '22023';
	END IF;
	RETURN id;
END
$$;
COMMENT ON FUNCTION snowflake_mask_sno_bytes(bytea) IS 'internal: a sno''s 10 bytes, checked; 22023 for another length';

CREATE FUNCTION sno_mask(id bytea, prefix text DEFAULT '') RETURNS text
LANGUAGE plpgsql STABLE STRICT SECURITY DEFINER PARALLEL RESTRICTED AS $$
DECLARE
	block bytea;
	hi bigint;
	lo bigint;
BEGIN
	id := snowflake_mask_sno_bytes(id);
	IF prefix <> '' AND NOT snowflake_mask_prefix_ok(prefix) THEN
		PERFORM snowflake_mask_bad_prefix(prefix);
	END IF;
	SELECT snowflake_mask_aes_encrypt(id || CASE WHEN prefix = '' THEN k.sno_tail
			ELSE k.key_byte || substr(snowflake_mask_hmac(pg_catalog.convert_to(prefix, 'UTF8'::name), k.sno_prefix_key), 1, 5) END,
			k.sno_key)
		INTO block FROM snowflake_mask_keys k WHERE k.active;
	IF block IS NULL THEN
		PERFORM snowflake_mask_no_key();
	END IF;
	hi := ('x' || encode(substr(block, 1, 8), 'hex'))::bit(64)::bigint;
	lo := ('x' || encode(substr(block, 9), 'hex'))::bit(64)::bigint;
	RETURN CASE WHEN prefix = '' THEN '' ELSE prefix || '_' END || snowflake_mask_base32(hi, lo);
END
$$;
COMMENT ON FUNCTION sno_mask(bytea, text) IS 'a 26-character token for a sno (its 10 bytes; with prefix_ before it if given) under the active key of snowflake_mask_keys: the C extension''s sno_mask() token byte for byte under the same key (AES-256-ECB of the 10 bytes, the key id and 5 bytes of HMAC-SHA256 of the prefix, under keys of its own: docs/internals.md, Masking). 22023 for another length or a prefix outside TypeID''s rule, 55000 with no key or without pgcrypto';

CREATE FUNCTION sno_unmask(token text, prefix text DEFAULT '') RETURNS bytea
LANGUAGE plpgsql STABLE STRICT SECURITY DEFINER PARALLEL RESTRICTED AS $$
DECLARE
	body bytea;
	found bytea;
	keys integer;
BEGIN
	IF prefix <> '' AND NOT snowflake_mask_prefix_ok(prefix) THEN
		PERFORM snowflake_mask_bad_prefix(prefix);
	END IF;
	body := snowflake_mask_token_body(token, prefix, 'sno');
	SELECT (pg_catalog.array_agg(substr(b.block, 1, 10) ORDER BY k.active DESC, k.key_id)
			FILTER (WHERE substr(b.block, 11) = CASE WHEN prefix = '' THEN k.sno_tail
				ELSE k.key_byte || substr(snowflake_mask_hmac(pg_catalog.convert_to(prefix, 'UTF8'::name), k.sno_prefix_key), 1, 5) END))[1],
			count(*)
		INTO found, keys
		FROM snowflake_mask_keys k, LATERAL (SELECT snowflake_mask_aes_decrypt(body, k.sno_key) AS block) b;
	IF keys = 0 THEN
		PERFORM snowflake_mask_no_key();
	END IF;
	IF found IS NULL THEN
		PERFORM snowflake_mask_not_authentic(token, 'sno');
	END IF;
	RETURN found;
END
$$;
COMMENT ON FUNCTION sno_unmask(text, text) IS 'the sno (10 bytes) of a token made by sno_mask() (here or by the C extension under the same key) with any key of snowflake_mask_keys, which must carry exactly prefix (none when not given); a changed or forged token, or a snowflake_mask() token, is 22P02; 22023 for a prefix outside TypeID''s rule, 55000 with no key or without pgcrypto';

-- ULIDs (kept as uuid): AES-256-ECB of the 16 bytes, not authenticated

CREATE FUNCTION snowflake_mask_ulid(id uuid, key_id integer, unmask boolean) RETURNS uuid
LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL RESTRICTED AS $$
#variable_conflict use_variable
DECLARE
	key bytea;
BEGIN
	IF id IS NULL THEN
		RETURN NULL;
	END IF;
	IF NOT EXISTS (SELECT FROM snowflake_mask_keys) THEN
		PERFORM snowflake_mask_no_key();
	END IF;
	SELECT k.ulid_key INTO key FROM snowflake_mask_keys k
		WHERE CASE WHEN key_id IS NULL THEN k.active ELSE k.key_id = key_id END;
	IF key IS NULL THEN
		RAISE EXCEPTION 'no mask key has the id %', key_id USING ERRCODE = '22023',
			HINT = 'The owner of the edition sees the keys in snowflake_mask_keys.';
	END IF;
	RETURN encode(CASE WHEN unmask THEN snowflake_mask_aes_decrypt(uuid_send(id), key)
		ELSE snowflake_mask_aes_encrypt(uuid_send(id), key) END, 'hex')::uuid;
END
$$;
COMMENT ON FUNCTION snowflake_mask_ulid(uuid, integer, boolean) IS 'internal: ulid_mask() and ulid_unmask()';

CREATE FUNCTION ulid_mask(id uuid, key_id integer DEFAULT NULL) RETURNS uuid
LANGUAGE sql STABLE PARALLEL RESTRICTED
RETURN snowflake_mask_ulid(id, key_id, false);
COMMENT ON FUNCTION ulid_mask(uuid, integer) IS 'a ULID (kept as uuid) with nothing to read in it: AES-256-ECB of its 16 bytes under the active mask key or the key of key_id, the C extension''s ulid_mask() byte for byte under the same key (docs/internals.md, Masking); not authenticated: any value unmasks to some ULID. NULL for NULL; 22023 for a key id that is not there, 55000 with no key or without pgcrypto';

CREATE FUNCTION ulid_unmask(id uuid, key_id integer DEFAULT NULL) RETURNS uuid
LANGUAGE sql STABLE PARALLEL RESTRICTED
RETURN snowflake_mask_ulid(id, key_id, true);
COMMENT ON FUNCTION ulid_unmask(uuid, integer) IS 'the ULID (kept as uuid) behind a ulid_mask() value, with the active mask key or the key of key_id; NULL for NULL; 22023 for a key id that is not there, 55000 with no key or without pgcrypto';

-- keys

CREATE FUNCTION snowflake_mask_key_add(key_id integer, key_hex text, active boolean DEFAULT false) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER PARALLEL UNSAFE AS $$
#variable_conflict use_variable
DECLARE
	k bytea;
	kb bytea;
	other integer;
	make_active boolean;
BEGIN
	PERFORM snowflake_refuse_open_schema();
	IF key_id IS NULL OR key_id NOT BETWEEN 0 AND 255 THEN
		RAISE EXCEPTION 'the key id is not a number from 0 to 255' USING ERRCODE = '22023';
	END IF;
	IF key_hex IS NULL OR key_hex COLLATE "C" !~ '^[0-9a-fA-F]{64}$' THEN
		RAISE EXCEPTION 'the key is not 64 hex digits (256 bits)' USING ERRCODE = '22023';
	END IF;
	k := decode(key_hex, 'hex');
	-- the C extension's refused keys (src/core/mask.cpp, refused_key): all zeros, and the
	-- example the README printed before 1.0.0
	IF k = '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea
			OR k = '\x6f3a1e0b9c2d4f5a7e8b1c3d5f7a9b0c2e4d6f8a1b3c5d7e9f0a2b4c6d8e0f1a'::bytea THEN
		RAISE EXCEPTION 'this key is all zeros or the README''s example' USING ERRCODE = '22023',
			HINT = 'Make one with snowflake_mask_key new (scripts/mask_key.sh), or: openssl rand -hex 32.';
	END IF;
	-- one writer at a time, so that exactly one key stays active
	LOCK TABLE snowflake_mask_keys IN SHARE ROW EXCLUSIVE MODE;
	IF EXISTS (SELECT FROM snowflake_mask_keys m WHERE m.key_id = key_id) THEN
		RAISE EXCEPTION 'mask key id % is taken', key_id USING ERRCODE = '23505',
			DETAIL = 'Tokens made under it unmask only with its key.',
			HINT = 'Take another id, or remove this one first with snowflake_mask_key_remove().';
	END IF;
	-- the first key is active whatever active says: one key is active while any exists
	make_active := coalesce(active, false) OR NOT EXISTS (SELECT FROM snowflake_mask_keys);
	kb := set_byte('\x00'::bytea, 0, key_id);
	SELECT m.key_id INTO other FROM snowflake_mask_keys m
		WHERE m.fingerprint = snowflake_mask_hmac(pg_catalog.convert_to('snowflake mask fingerprint v1', 'UTF8'::name), k);
	IF other IS NOT NULL THEN
		RAISE WARNING 'key id % holds the same key as key id %', key_id, other
			USING HINT = 'Give each key id a key of its own.';
	END IF;
	IF make_active THEN
		UPDATE snowflake_mask_keys m SET active = false WHERE m.active;
	END IF;
	WITH d AS (SELECT snowflake_mask_hmac(pg_catalog.convert_to('snowflake mask bigint prefix v1', 'UTF8'::name), k) AS bp,
			snowflake_mask_hmac(pg_catalog.convert_to('snowflake mask sno prefix v1', 'UTF8'::name), k) AS sp)
	INSERT INTO snowflake_mask_keys (key_id, active, key_byte, bigint_key, bigint_prefix_key, bigint_tail,
			sno_key, sno_prefix_key, sno_tail, ulid_key, fingerprint)
		SELECT key_id, make_active, kb,
			snowflake_mask_hmac(pg_catalog.convert_to('snowflake mask bigint v1', 'UTF8'::name), k), d.bp,
			kb || substr(snowflake_mask_hmac('', d.bp), 1, 7),
			snowflake_mask_hmac(pg_catalog.convert_to('snowflake mask sno v1', 'UTF8'::name), k), d.sp,
			kb || substr(snowflake_mask_hmac('', d.sp), 1, 5),
			snowflake_mask_hmac(pg_catalog.convert_to('snowflake mask ulid v1', 'UTF8'::name), k),
			snowflake_mask_hmac(pg_catalog.convert_to('snowflake mask fingerprint v1', 'UTF8'::name), k)
		FROM d;
END
$$;
REVOKE ALL ON FUNCTION snowflake_mask_key_add(integer, text, boolean) FROM PUBLIC;
COMMENT ON FUNCTION snowflake_mask_key_add(integer, text, boolean) IS 'adds the 256-bit master key key_hex (64 hex digits) under key_id (0 to 255), as a line "key_id key_hex [active]" of the C extension''s snowflake.mask_key_file: the same key gives the same tokens. active makes it the key that masks (the others stay to unmask), in one statement; the first key is active whatever active says. Keeps only the derived keys (snowflake_mask_keys). 22023 for a bad id, a key that is not 64 hex digits, all zeros or the README''s old example; 23505 for an id taken (a WARNING for a key already under another id); 55000 without pgcrypto. The owner''s alone; the key is in the statement''s text (logs)';

CREATE FUNCTION snowflake_mask_key_remove(key_id integer) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER PARALLEL UNSAFE AS $$
#variable_conflict use_variable
DECLARE
	was_active boolean;
BEGIN
	LOCK TABLE snowflake_mask_keys IN SHARE ROW EXCLUSIVE MODE;
	SELECT m.active INTO was_active FROM snowflake_mask_keys m WHERE m.key_id = key_id;
	IF was_active IS NULL THEN
		RAISE EXCEPTION 'no mask key has the id %', key_id USING ERRCODE = '22023';
	END IF;
	IF was_active AND EXISTS (SELECT FROM snowflake_mask_keys m WHERE m.key_id <> key_id) THEN
		RAISE EXCEPTION 'mask key % is the active key', key_id USING ERRCODE = '55000',
			DETAIL = 'Another key is kept to unmask: one key must stay active while any exists.',
			HINT = 'Add the key that will mask first: snowflake_mask_key_add(id, hex, true).';
	END IF;
	DELETE FROM snowflake_mask_keys m WHERE m.key_id = key_id;
END
$$;
REVOKE ALL ON FUNCTION snowflake_mask_key_remove(integer) FROM PUBLIC;
COMMENT ON FUNCTION snowflake_mask_key_remove(integer) IS 'removes the mask key key_id: the tokens it made no longer unmask (22P02), as when a line leaves the C extension''s key file. 22023 when no key has that id; 55000 for the active key while other keys remain (add the next active key first). The owner''s alone';

CREATE FUNCTION snowflake_mask_key_fingerprint() RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER PARALLEL RESTRICTED
BEGIN ATOMIC
	SELECT left(encode(sha256(string_agg(k.key_byte || CASE WHEN k.active THEN '\x01'::bytea ELSE '\x00'::bytea END
			|| k.fingerprint, ''::bytea ORDER BY k.active DESC, k.key_id)), 'hex'), 16)
		FROM snowflake_mask_keys k;
END;
REVOKE ALL ON FUNCTION snowflake_mask_key_fingerprint() FROM PUBLIC;
COMMENT ON FUNCTION snowflake_mask_key_fingerprint() IS 'the C extension''s snowflake_status().mask_key_fingerprint of these keys (16 hex digits of SHA-256 over each key''s id, active flag and HMAC-SHA256(K, ''snowflake mask fingerprint v1''), the active first, then by id): equal when a server of the C extension holds the same keys, with the same one active; NULL with no key. Tells nothing of the keys. The owner''s alone (grant it to whom may compare)';
