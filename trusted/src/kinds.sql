-- The other kinds' decoders, bounds and text (sno, rsxid, ksuid, other systems), TypeID, and
-- the 128-bit kinds' generators from a time.
--
-- sno, rsxid and ksuid are kept as bytea of their exact length (10, 12, 20 bytes): a role that
-- is not a superuser cannot create a base type, and the C types' bytes are the same, so
-- bytea's order is theirs. <kind>_to_text(bytea) and text_to_<kind>(text) are the C types'
-- output and input.
--
-- Speed: a SQL function that the planner does not inline sets up an executor at each call, and
-- one that such a function calls is planned again at each call, ten times slower still. So
-- the functions that return one value are SQL of one expression that the planner inlines
-- into the caller's query: not STRICT (a STRICT function whose body holds a CASE is never
-- inlined), with every check a CASE whose error branch is taken only when the check fails, so
-- that NULL gives NULL all the same; their helpers are inlined too, or PL/pgSQL (whose plans
-- last the session). The decoders that return a record (never inlined) are STRICT, as the C
-- extension's, and call nothing but built-in functions, inlined helpers and PL/pgSQL.
-- Errors are raised in PL/pgSQL: in the SQL functions by snowflake_bad_*, always with the input
-- among their arguments (a call with constant arguments alone would be folded, and raise, when the
-- query is planned). PL/pgSQL resolves names at run time in the caller's search_path, so no
-- PL/pgSQL function here calls a function of this schema.

-- errors

CREATE FUNCTION snowflake_bad_length(id bytea, bytes integer, a_kind text, result anyelement)
RETURNS anyelement
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
	RAISE EXCEPTION 'invalid length for %: % bytes', a_kind, length(id)
		USING ERRCODE = '22P03', DETAIL = format('%s is %s bytes.', upper(left(a_kind, 1)) || substr(a_kind, 2), bytes);
END
$$;
COMMENT ON FUNCTION snowflake_bad_length(bytea, integer, text, anyelement) IS 'raises 22P03 for a bytea of another length than the kind''s (a_kind: "a sno", "an rsxid", ...), as the C extension''s bytea_to_sno() and the like; never returns (result: NULL of the caller''s type)';

CREATE FUNCTION snowflake_bad_negative(id bigint, kind text, result anyelement) RETURNS anyelement
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
	RAISE EXCEPTION '% ID % is negative', kind, id
		USING ERRCODE = '22003', DETAIL = format('%s IDs are positive bigints.', kind);
END
$$;
COMMENT ON FUNCTION snowflake_bad_negative(bigint, text, anyelement) IS 'raises 22003 for a negative ID of a 64-bit layout (kind: twitter, discord, ...), as the C extension''s decoders; never returns (result: NULL of the caller''s type)';

-- kind: sno, rsxid, ksuid, ObjectId, TypeID (a TypeID to read) or TypeID prefix (one to write)
CREATE FUNCTION snowflake_bad_text(kind text, id text, result anyelement) RETURNS anyelement
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
	message text := format('invalid input syntax for type %s: "%s"', kind, id);
	problem text;
	bad integer;       -- the first character outside the alphabet, 1-based, else 0
	suffix text := id;
	sep integer;
	shown text;
BEGIN
	IF kind = 'sno' THEN
		bad := length(substring(id FROM '^[2-9a-x]*')) + 1;
		IF left(id, 2) = '\x' THEN
			problem := 'A sno in bytea''s hex form is \x and 20 hexadecimal digits.';
		ELSIF length(id) <> 16 THEN
			problem := format('A sno is 16 characters, not %s.', length(id));
		ELSE
			problem := 'Character %s at position %s is not one of 2-9 and a-x (lower case).';
		END IF;
	ELSIF kind = 'rsxid' THEN
		bad := length(substring(id FROM '^[0-9a-v]*')) + 1;
		IF length(id) <> 20 THEN
			problem := format('An rsxid is 20 characters, not %s.', length(id));
		ELSIF bad <= 20 THEN
			problem := 'Character %s at position %s is not one of 0-9 and a-v (lower case).';
		ELSE
			bad := 20;
			problem := 'Character %s at position %s is not 0 or g: the last character of an rsxid carries 1 bit.';
		END IF;
	ELSIF kind = 'ksuid' THEN
		bad := length(substring(id FROM '^[0-9A-Za-z]*')) + 1;
		IF length(id) <> 27 THEN
			problem := format('A KSUID is 27 characters, not %s.', length(id));
		ELSIF bad <= 27 THEN
			problem := 'Character %s at position %s is not one of 0-9, A-Z and a-z.';
		ELSE
			problem := 'It is above the largest KSUID, aWgEPTl1tmebfsQzFP4bxwgy80V (2^160 - 1).';
		END IF;
	ELSIF kind = 'ObjectId' THEN
		message := format('invalid input syntax for ObjectId: "%s"', id);
		problem := CASE WHEN octet_length(id) <> 24 THEN 'An ObjectId is 24 hexadecimal digits.'
			ELSE 'An ObjectId is 24 hexadecimal digits (0-9, a-f, A-F).' END;
	ELSIF kind IN ('TypeID', 'TypeID prefix') THEN
		-- the TypeID specification's rules, the first one broken reading left to right (as the
		-- C extension's typeid_codec.cpp): the prefix's characters, its ends, its length; then
		-- the suffix's length (in bytes), characters and first character
		IF kind = 'TypeID' THEN
			message := format('invalid input syntax for TypeID: "%s"', id);
			sep := length(id) + 1 - coalesce(nullif(strpos(reverse(id), '_'), 0), length(id) + 1);
			IF sep = 1 THEN
				problem := 'A TypeID with an empty prefix has no underscore: it is the 26-character suffix alone.';
			ELSIF sep > 1 THEN
				suffix := substr(id, sep + 1);
				id := left(id, sep - 1);
			ELSE
				id := '';
			END IF;
		ELSE
			message := format('invalid TypeID prefix: "%s"', id);
		END IF;
		IF problem IS NOT NULL THEN
			NULL;
		ELSIF id ~ '[^a-z_]' THEN
			problem := CASE WHEN substring(id FROM '[^a-z_]') ~ '^[A-Z]$'
				THEN 'A TypeID prefix is in lower case: only the letters a-z and underscores.'
				ELSE 'A TypeID prefix has only the letters a-z and underscores.' END;
		ELSIF left(id, 1) = '_' THEN
			problem := 'A TypeID prefix may not start with an underscore.';
		ELSIF right(id, 1) = '_' THEN
			problem := 'A TypeID prefix may not end with an underscore.';
		ELSIF length(id) > 63 THEN
			problem := 'A TypeID prefix is at most 63 characters.';
		ELSIF kind = 'TypeID' THEN
			IF octet_length(suffix) <> 26 THEN
				problem := 'A TypeID suffix is 26 characters: all that follows the last underscore, or the whole TypeID when it has no prefix.';
			ELSIF suffix ~ '[^0-9a-hjkmnp-tv-z]' THEN
				problem := CASE WHEN substring(suffix FROM '[^0-9a-hjkmnp-tv-z]') ~ '^[A-HJKMNP-TV-Z]$'
					THEN 'A TypeID suffix is in lower case.'
					ELSE 'A TypeID suffix has only the characters 0-9 and a-z without i, l, o and u.' END;
			ELSE
				problem := 'The first character of a TypeID suffix is at most 7 (the suffix holds 128 bits).';
			END IF;
		END IF;
		IF problem IS NULL THEN
			RAISE EXCEPTION 'snowflake_bad_text: % "%" is valid', kind, id USING ERRCODE = 'XX000';
		END IF;
	ELSE
		RAISE EXCEPTION 'snowflake_bad_text: unknown kind %', kind USING ERRCODE = '22023';
	END IF;
	IF left(problem, 10) = 'Character ' THEN
		-- as the C extension shows a character: printable ASCII as itself, another single byte
		-- as its value, a character of several bytes as itself (with its code point in UTF8)
		shown := substr(id, bad, 1);
		shown := CASE WHEN ascii(shown) BETWEEN 33 AND 126 THEN format('"%s"', shown)
			WHEN octet_length(shown) = 1 THEN '0x' || lpad(to_hex(ascii(shown)), 2, '0')
			WHEN getdatabaseencoding() = 'UTF8' THEN format('"%s" (U+%s)', shown, upper(lpad(to_hex(ascii(shown)), 4, '0')))
			ELSE format('"%s"', shown) END;
		problem := format(problem, shown, bad);
	END IF;
	RAISE EXCEPTION USING ERRCODE = '22P02', MESSAGE = message, DETAIL = problem;
END
$$;
COMMENT ON FUNCTION snowflake_bad_text(text, text, anyelement) IS 'raises 22P02 for text that is no sno, rsxid, ksuid, ObjectId, TypeID or TypeID prefix (kind), with the C extension''s message and a DETAIL naming the rule broken (lengths and positions in characters); never returns (result: NULL of the caller''s type)';

CREATE FUNCTION snowflake_ms_within(ts timestamptz, first_ms bigint, last_ms bigint, kinds text, covered text)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
	ms bigint;
BEGIN
	IF NOT isfinite(ts) THEN
		RAISE EXCEPTION 'timestamp out of range: infinite timestamps have no ID' USING ERRCODE = '22008';
	END IF;
	ms := floor(extract(epoch FROM ts) * 1000)::bigint;
	IF ms NOT BETWEEN first_ms AND last_ms THEN
		RAISE EXCEPTION 'timestamp is outside the range of %', kinds USING ERRCODE = '22008',
			DETAIL = format('%s cover %s.', kinds, covered);
	END IF;
	RETURN ms;
END
$$;
COMMENT ON FUNCTION snowflake_ms_within(timestamptz, bigint, bigint, text, text) IS 'the Unix millisecond that holds a time (rounded down); 22008 for an infinite time or one outside first_ms to last_ms, naming the kinds and the range they cover, as the C extension''s *_at()';

-- base32 of a number given in hexadecimal, right-aligned, in blocks of 40 bits (10 hex
-- digits, 8 characters), which fit a bigint. PL/pgSQL: each block is computed once, and its
-- plans last the session wherever it is called from.

CREATE FUNCTION snowflake_base32_encode(hex text, chars integer, alphabet text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
	padded constant text := lpad(hex, (length(hex) + 9) / 10 * 10, '0');
	v bigint;
	result text := '';
BEGIN
	FOR i IN 0 .. length(padded) / 10 - 1 LOOP
		v := ('x' || substr(padded, i * 10 + 1, 10))::bit(40)::bigint;
		result := result || substr(alphabet, (v >> 35)::integer + 1, 1) || substr(alphabet, (v >> 30 & 31)::integer + 1, 1)
			|| substr(alphabet, (v >> 25 & 31)::integer + 1, 1) || substr(alphabet, (v >> 20 & 31)::integer + 1, 1)
			|| substr(alphabet, (v >> 15 & 31)::integer + 1, 1) || substr(alphabet, (v >> 10 & 31)::integer + 1, 1)
			|| substr(alphabet, (v >> 5 & 31)::integer + 1, 1) || substr(alphabet, (v & 31)::integer + 1, 1);
	END LOOP;
	RETURN right(result, chars);
END
$$;
COMMENT ON FUNCTION snowflake_base32_encode(text, integer, text) IS 'the number of the hexadecimal digits as its last chars characters of the 32-character alphabet, most significant first';

CREATE FUNCTION snowflake_base32_decode(t text, alphabet text, hex_digits integer) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
	padded constant text := lpad(t, (length(t) + 7) / 8 * 8, left(alphabet, 1));
	s text;
	result text := '';
BEGIN
	FOR i IN 0 .. length(padded) / 8 - 1 LOOP
		s := substr(padded, i * 8 + 1, 8);
		result := result || lpad(to_hex(((strpos(alphabet, substr(s, 1, 1)) - 1)::bigint << 35)
			| ((strpos(alphabet, substr(s, 2, 1)) - 1)::bigint << 30) | ((strpos(alphabet, substr(s, 3, 1)) - 1)::bigint << 25)
			| ((strpos(alphabet, substr(s, 4, 1)) - 1)::bigint << 20) | ((strpos(alphabet, substr(s, 5, 1)) - 1)::bigint << 15)
			| ((strpos(alphabet, substr(s, 6, 1)) - 1)::bigint << 10) | ((strpos(alphabet, substr(s, 7, 1)) - 1)::bigint << 5)
			| (strpos(alphabet, substr(s, 8, 1)) - 1)::bigint), 10, '0');
	END LOOP;
	RETURN right(result, hex_digits);
END
$$;
COMMENT ON FUNCTION snowflake_base32_decode(text, text, integer) IS 'the number of characters of the 32-character alphabet (checked by the caller) as its last hex_digits hexadecimal digits';

CREATE FUNCTION snowflake_hex_bigint(hex text) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN ('x' || lpad(hex, 16, '0'))::bit(64)::bigint;
COMMENT ON FUNCTION snowflake_hex_bigint(text) IS 'the value of at most 16 hexadecimal digits (16: as a two''s complement bigint)';

CREATE FUNCTION snowflake_timestamptz_of_ms(ms bigint) RETURNS timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN timezone('UTC', timestamp '1970-01-01 00:00:00' + ms * interval '1 millisecond');
COMMENT ON FUNCTION snowflake_timestamptz_of_ms(bigint) IS 'the time of a Unix millisecond, exact to 2^53 microseconds (the year 2255, past every time these IDs hold); IMMUTABLE throughout, so that it is inlined';

-- sno (github.com/muyo/sno): 10 bytes: 39 bits of 4 ms units since 2010-01-01 00:00 UTC, the
-- tick-tock bit, the metabyte, 16 bits of partition, 16 of sequence. Text: 16 characters of
-- 2-9 and a-x, 5 bits each in byte order.

CREATE FUNCTION sno_to_text(id bytea) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN length(id) <> 10 THEN snowflake_bad_length(id, 10, 'a sno', NULL::text)
	ELSE snowflake_base32_encode(encode(id, 'hex'), 16, '23456789abcdefghijklmnopqrstuvwx') END;
COMMENT ON FUNCTION sno_to_text(bytea) IS 'the 16 characters (2-9 and a-x) of a sno kept as its 10 bytes, as the C extension''s sno type prints it (github.com/muyo/sno); 22P03 for another length than 10 bytes';

CREATE FUNCTION text_to_sno(id text) RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN id !~ '^[2-9a-x]{16}$' THEN
		CASE WHEN id ~ '^\\x[0-9a-fA-F]{20}$' THEN decode(substr(id, 3), 'hex') ELSE snowflake_bad_text('sno', id, NULL::bytea) END
	ELSE decode(snowflake_base32_decode(id, '23456789abcdefghijklmnopqrstuvwx', 20), 'hex') END;
COMMENT ON FUNCTION text_to_sno(text) IS 'the 10 bytes of a sno from its 16 characters (2-9 and a-x, lower case) or from bytea''s hex text (\x and 20 hexadecimal digits, what pgx sends for muyo/sno''s value), as the C extension''s sno type reads them; 22P02 otherwise, the DETAIL naming the length or the character and its position';

CREATE FUNCTION sno_timestamp(id bytea) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN length(id) <> 10 THEN snowflake_bad_length(id, 10, 'a sno', NULL::timestamptz)
	ELSE snowflake_timestamptz_of_ms(1262304000000 + (snowflake_hex_bigint(encode(substr(id, 1, 5), 'hex')) >> 1) * 4) END;
COMMENT ON FUNCTION sno_timestamp(bytea) IS 'the time of a sno kept as its 10 bytes, in 4 ms units (github.com/muyo/sno); 22P03 for another length';

CREATE FUNCTION sno_timestamp(id text) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN snowflake_timestamptz_of_ms(1262304000000 + (snowflake_hex_bigint(encode(substr(text_to_sno(id), 1, 5), 'hex')) >> 1) * 4);
COMMENT ON FUNCTION sno_timestamp(text) IS 'the time of a sno given as text, read as text_to_sno reads it (a literal resolves to this form, as to the C extension''s sno type); 22P02 for bad text';

-- (PL/pgSQL: a function that returns a record is never inlined, and PL/pgSQL's plans last the
-- session, so that the text forms below may call it at no extra cost)
CREATE FUNCTION sno_decode(id bytea, OUT ts timestamptz, OUT meta integer, OUT partition integer,
	OUT sequence integer, OUT tick boolean)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
	IF length(id) <> 10 THEN
		RAISE EXCEPTION 'invalid length for a sno: % bytes', length(id) USING ERRCODE = '22P03', DETAIL = 'A sno is 10 bytes.';
	END IF;
	ts := timezone('UTC', timestamp '2010-01-01 00:00:00'
		+ (('x' || encode(substr(id, 1, 5), 'hex'))::bit(40)::bigint >> 1) * 4 * interval '1 millisecond');
	meta := get_byte(id, 5);
	partition := (get_byte(id, 6) << 8) | get_byte(id, 7);
	sequence := (get_byte(id, 8) << 8) | get_byte(id, 9);
	tick := (get_byte(id, 4) & 1) = 1;
END
$$;
COMMENT ON FUNCTION sno_decode(bytea) IS 'the time (4 ms units), metabyte, partition, sequence and tick-tock bit of a sno kept as its 10 bytes (github.com/muyo/sno); 22P03 for another length';

CREATE FUNCTION sno_decode(id text, OUT ts timestamptz, OUT meta integer, OUT partition integer,
	OUT sequence integer, OUT tick boolean)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN sno_decode(text_to_sno(id));
COMMENT ON FUNCTION sno_decode(text) IS 'sno_decode of a sno given as text, read as text_to_sno reads it (a literal resolves to this form, as to the C extension''s sno type); 22P02 for bad text';

CREATE FUNCTION sno_at(ts timestamptz) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN decode(lpad(to_hex((snowflake_ms_within(ts, 1262304000000, 3461327255551, 'sno IDs',
	'2010-01-01 00:00:00 UTC to 2079-09-07 15:47:35.551 UTC, in 4 ms units') - 1262304000000) / 4 << 1), 10, '0')
	|| '0000000000', 'hex');
COMMENT ON FUNCTION sno_at(timestamptz) IS 'the smallest sno (10 bytes) of the 4 ms unit that holds the time, for key range scans and partition bounds; 22008 outside 2010-01-01 00:00:00 to 2079-09-07 15:47:35.551 UTC or for an infinite time';

-- rsxid (github.com/rs/xid): 12 bytes: 32 bits of Unix seconds, a 3-byte machine id, a 2-byte
-- process id, a 3-byte counter. Text: 20 characters of base32hex in lower case, 5 bits each
-- from the top; the last one carries 1 bit and 4 zero bits (0 or g).

CREATE FUNCTION rsxid_to_text(id bytea) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN length(id) <> 12 THEN snowflake_bad_length(id, 12, 'an rsxid', NULL::text)
	-- 96 bits and 4 zero bits of padding: 100 bits, 20 characters
	ELSE snowflake_base32_encode(encode(id, 'hex') || '0', 20, '0123456789abcdefghijklmnopqrstuv') END;
COMMENT ON FUNCTION rsxid_to_text(bytea) IS 'the 20 characters (0-9 and a-v) of an xid (github.com/rs/xid) kept as its 12 bytes, as the C extension''s rsxid type prints it; 22P03 for another length than 12 bytes';

CREATE FUNCTION text_to_rsxid(id text) RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN id !~ '^[0-9a-v]{19}[0g]$' THEN snowflake_bad_text('rsxid', id, NULL::bytea)
	ELSE decode(left(snowflake_base32_decode(id, '0123456789abcdefghijklmnopqrstuv', 25), 24), 'hex') END;
COMMENT ON FUNCTION text_to_rsxid(text) IS 'the 12 bytes of an xid (github.com/rs/xid) from its 20 characters (0-9 and a-v, lower case, the last 0 or g), as the C extension''s rsxid type reads them; 22P02 otherwise, the DETAIL naming the length or the character and its position';

CREATE FUNCTION rsxid_timestamp(id bytea) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN length(id) <> 12 THEN snowflake_bad_length(id, 12, 'an rsxid', NULL::timestamptz)
	ELSE snowflake_timestamptz_of_ms(snowflake_hex_bigint(encode(substr(id, 1, 4), 'hex')) * 1000) END;
COMMENT ON FUNCTION rsxid_timestamp(bytea) IS 'the second of an xid (github.com/rs/xid) kept as its 12 bytes; 22P03 for another length';

CREATE FUNCTION rsxid_timestamp(id text) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN snowflake_timestamptz_of_ms(snowflake_hex_bigint(encode(substr(text_to_rsxid(id), 1, 4), 'hex')) * 1000);
COMMENT ON FUNCTION rsxid_timestamp(text) IS 'the second of an xid (github.com/rs/xid) kept as text, read as text_to_rsxid reads it; 22P02 for bad text';

CREATE FUNCTION rsxid_decode(id bytea, OUT ts timestamptz, OUT machine bytea, OUT pid integer,
	OUT counter integer)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
	IF length(id) <> 12 THEN
		RAISE EXCEPTION 'invalid length for an rsxid: % bytes', length(id) USING ERRCODE = '22P03', DETAIL = 'An rsxid is 12 bytes.';
	END IF;
	ts := timezone('UTC', timestamp '1970-01-01 00:00:00' + ('x' || encode(substr(id, 1, 4), 'hex'))::bit(32)::bigint * interval '1 second');
	machine := substr(id, 5, 3);
	pid := (get_byte(id, 7) << 8) | get_byte(id, 8);
	counter := (get_byte(id, 9) << 16) | (get_byte(id, 10) << 8) | get_byte(id, 11);
END
$$;
COMMENT ON FUNCTION rsxid_decode(bytea) IS 'the second, the 3-byte machine id, the process id and the counter of an xid (github.com/rs/xid) kept as its 12 bytes; 22P03 for another length';

CREATE FUNCTION rsxid_decode(id text, OUT ts timestamptz, OUT machine bytea, OUT pid integer,
	OUT counter integer)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN rsxid_decode(text_to_rsxid(id));
COMMENT ON FUNCTION rsxid_decode(text) IS 'the second, the 3-byte machine id, the process id and the counter of an xid (github.com/rs/xid) kept as text, read as text_to_rsxid reads it; 22P02 for bad text';

CREATE FUNCTION rsxid_at(ts timestamptz) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN decode(lpad(to_hex(snowflake_ms_within(ts, 0, 4294967295999, 'rsxids',
	'1970-01-01 00:00:00 UTC to 2106-02-07 06:28:15 UTC, in seconds') / 1000), 8, '0') || '0000000000000000', 'hex');
COMMENT ON FUNCTION rsxid_at(timestamptz) IS 'the smallest xid (12 bytes) of the second that holds the time, for key range scans and partition bounds; 22008 outside 1970 to 2106-02-07 06:28:15 UTC or for an infinite time';

-- ksuid (github.com/segmentio/ksuid): 20 bytes: 32 bits of seconds since 1400000000
-- (2014-05-13 16:53:20 UTC), then a 16-byte payload. Text: the 160-bit number in 27
-- characters of base62, zero padded. numeric does the arithmetic, in PL/pgSQL (the number is
-- needed several times) and in blocks of 9 characters, which fit a bigint.

CREATE FUNCTION snowflake_ksuid_encode(id bytea) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
	a constant text := '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
	h constant text := encode(id, 'hex');
	v numeric := ((('x' || substr(h, 1, 10))::bit(40)::bigint * 1099511627776::numeric
		+ ('x' || substr(h, 11, 10))::bit(40)::bigint) * 1099511627776::numeric
		+ ('x' || substr(h, 21, 10))::bit(40)::bigint) * 1099511627776::numeric
		+ ('x' || substr(h, 31, 10))::bit(40)::bigint;
	c bigint;
	result text := '';
BEGIN
	FOR i IN 1..3 LOOP  -- 9 characters (62^9 < 2^63) at a time, the last first
		c := mod(v, 13537086546263552)::bigint;
		v := div(v, 13537086546263552);
		result := substr(a, (c / 218340105584896 % 62)::integer + 1, 1) || substr(a, (c / 3521614606208 % 62)::integer + 1, 1)
			|| substr(a, (c / 56800235584 % 62)::integer + 1, 1) || substr(a, (c / 916132832 % 62)::integer + 1, 1)
			|| substr(a, (c / 14776336 % 62)::integer + 1, 1) || substr(a, (c / 238328 % 62)::integer + 1, 1)
			|| substr(a, (c / 3844 % 62)::integer + 1, 1) || substr(a, (c / 62 % 62)::integer + 1, 1)
			|| substr(a, (c % 62)::integer + 1, 1) || result;
	END LOOP;
	RETURN result;
END
$$;
COMMENT ON FUNCTION snowflake_ksuid_encode(bytea) IS 'the 27 base62 characters of 20 bytes (their length checked by the caller), for ksuid_to_text';

CREATE FUNCTION snowflake_ksuid_decode(t text) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
	a constant text := '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
	v numeric := 0;
	s text;
BEGIN
	FOR i IN 0..2 LOOP  -- 9 characters at a time, the first first
		s := substr(t, i * 9 + 1, 9);
		v := v * 13537086546263552 + ((strpos(a, substr(s, 1, 1)) - 1) * 218340105584896
			+ (strpos(a, substr(s, 2, 1)) - 1) * 3521614606208 + (strpos(a, substr(s, 3, 1)) - 1) * 56800235584
			+ (strpos(a, substr(s, 4, 1)) - 1) * 916132832::bigint + (strpos(a, substr(s, 5, 1)) - 1) * 14776336::bigint
			+ (strpos(a, substr(s, 6, 1)) - 1) * 238328::bigint + (strpos(a, substr(s, 7, 1)) - 1) * 3844::bigint
			+ (strpos(a, substr(s, 8, 1)) - 1) * 62::bigint + (strpos(a, substr(s, 9, 1)) - 1));
	END LOOP;
	RETURN decode(lpad(to_hex(div(v, 1329227995784915872903807060280344576)::bigint), 10, '0')
		|| lpad(to_hex(mod(div(v, 1208925819614629174706176), 1099511627776)::bigint), 10, '0')
		|| lpad(to_hex(mod(div(v, 1099511627776), 1099511627776)::bigint), 10, '0')
		|| lpad(to_hex(mod(v, 1099511627776)::bigint), 10, '0'), 'hex');
END
$$;
COMMENT ON FUNCTION snowflake_ksuid_decode(text) IS 'the 20 bytes of 27 base62 characters at most aWgEPTl1tmebfsQzFP4bxwgy80V (checked by the caller), for text_to_ksuid';

CREATE FUNCTION ksuid_to_text(id bytea) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN length(id) <> 20 THEN snowflake_bad_length(id, 20, 'a KSUID', NULL::text) ELSE snowflake_ksuid_encode(id) END;
COMMENT ON FUNCTION ksuid_to_text(bytea) IS 'the 27 base62 characters (0-9, A-Z, a-z, zero padded) of a KSUID (github.com/segmentio/ksuid) kept as its 20 bytes, as the C extension''s ksuid type prints it; 22P03 for another length than 20 bytes';

-- base62 in a fixed width sorts as its number under a byte-wise collation: the largest KSUID's
-- text is the bound
CREATE FUNCTION text_to_ksuid(id text) RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN id !~ '^[0-9A-Za-z]{27}$' OR id COLLATE "C" > 'aWgEPTl1tmebfsQzFP4bxwgy80V'
	THEN snowflake_bad_text('ksuid', id, NULL::bytea) ELSE snowflake_ksuid_decode(id) END;
COMMENT ON FUNCTION text_to_ksuid(text) IS 'the 20 bytes of a KSUID (github.com/segmentio/ksuid) from its 27 base62 characters (0-9, A-Z, a-z), at most aWgEPTl1tmebfsQzFP4bxwgy80V (2^160 - 1), as the C extension''s ksuid type reads them; 22P02 otherwise, the DETAIL naming the length, the character and its position, or the overflow';

CREATE FUNCTION ksuid_timestamp(id bytea) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN length(id) <> 20 THEN snowflake_bad_length(id, 20, 'a KSUID', NULL::timestamptz)
	ELSE snowflake_timestamptz_of_ms((1400000000 + snowflake_hex_bigint(encode(substr(id, 1, 4), 'hex'))) * 1000) END;
COMMENT ON FUNCTION ksuid_timestamp(bytea) IS 'the second of a KSUID (github.com/segmentio/ksuid) kept as its 20 bytes; 22P03 for another length';

CREATE FUNCTION ksuid_timestamp(id text) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN snowflake_timestamptz_of_ms((1400000000 + snowflake_hex_bigint(encode(substr(text_to_ksuid(id), 1, 4), 'hex'))) * 1000);
COMMENT ON FUNCTION ksuid_timestamp(text) IS 'the second of a KSUID kept as text (27 base62 characters), read as text_to_ksuid reads it; 22P02 for bad text';

CREATE FUNCTION ksuid_decode(id bytea, OUT ts timestamptz, OUT payload bytea)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
	IF length(id) <> 20 THEN
		RAISE EXCEPTION 'invalid length for a KSUID: % bytes', length(id) USING ERRCODE = '22P03', DETAIL = 'A KSUID is 20 bytes.';
	END IF;
	ts := timezone('UTC', timestamp '2014-05-13 16:53:20' + ('x' || encode(substr(id, 1, 4), 'hex'))::bit(32)::bigint * interval '1 second');
	payload := substr(id, 5, 16);
END
$$;
COMMENT ON FUNCTION ksuid_decode(bytea) IS 'the second and the 16-byte payload of a KSUID (github.com/segmentio/ksuid) kept as its 20 bytes; 22P03 for another length';

CREATE FUNCTION ksuid_decode(id text, OUT ts timestamptz, OUT payload bytea)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN ksuid_decode(text_to_ksuid(id));
COMMENT ON FUNCTION ksuid_decode(text) IS 'the second and the 16-byte payload of a KSUID kept as text (27 base62 characters), read as text_to_ksuid reads it; 22P02 for bad text';

CREATE FUNCTION ksuid_at(ts timestamptz) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN decode(lpad(to_hex(snowflake_ms_within(ts, 1400000000000, 5694967295999, 'KSUIDs',
	'2014-05-13 16:53:20 UTC to 2150-06-19 23:21:35 UTC, in seconds') / 1000 - 1400000000), 8, '0')
	|| '00000000000000000000000000000000', 'hex');
COMMENT ON FUNCTION ksuid_at(timestamptz) IS 'the smallest KSUID (20 bytes) of the second that holds the time, for key range scans and partition bounds; 22008 outside 2014-05-13 16:53:20 to 2150-06-19 23:21:35 UTC or for an infinite time';

-- other systems' 64-bit IDs (docs/other-systems.md; the C extension's src/core/layout.hpp):
-- a time field in units since an epoch, a node field and a sequence field

CREATE FUNCTION snowflake_layout(name text, OUT epoch_ms bigint, OUT unit_ms integer, OUT time_shift integer,
	OUT node_shift integer, OUT node_bits integer, OUT seq_shift integer, OUT seq_bits integer)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
	-- the C extension's lookup: ASCII letters in any case, nothing else folded
	CASE translate(name, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
		WHEN 'twitter' THEN SELECT 1288834974657, 1, 22, 12, 10, 0, 12 INTO epoch_ms, unit_ms, time_shift, node_shift, node_bits, seq_shift, seq_bits;
		WHEN 'discord' THEN SELECT 1420070400000, 1, 22, 12, 10, 0, 12 INTO epoch_ms, unit_ms, time_shift, node_shift, node_bits, seq_shift, seq_bits;
		WHEN 'sonyflake' THEN SELECT 1409529600000, 10, 24, 0, 16, 16, 8 INTO epoch_ms, unit_ms, time_shift, node_shift, node_bits, seq_shift, seq_bits;
		WHEN 'pgedge' THEN SELECT 1672531200000, 1, 22, 12, 10, 0, 12 INTO epoch_ms, unit_ms, time_shift, node_shift, node_bits, seq_shift, seq_bits;
		WHEN 'pgedge_1_1' THEN SELECT 1672531200000, 1, 22, 0, 10, 10, 12 INTO epoch_ms, unit_ms, time_shift, node_shift, node_bits, seq_shift, seq_bits;
		WHEN 'instagram' THEN SELECT 1314220021721, 1, 23, 10, 13, 0, 10 INTO epoch_ms, unit_ms, time_shift, node_shift, node_bits, seq_shift, seq_bits;
		ELSE
			RAISE EXCEPTION 'unknown snowflake layout "%"', name USING ERRCODE = '22023',
				DETAIL = 'The known layouts are twitter, discord, sonyflake, pgedge, pgedge_1_1, instagram.',
				HINT = 'For this extension''s own IDs, call snowflake_decode(id) or snowflake_at(ts); to pass an epoch, give it as a timestamptz.';
	END CASE;
END
$$;
COMMENT ON FUNCTION snowflake_layout(text) IS 'another system''s 64-bit layout by name (twitter, discord, sonyflake, pgedge, pgedge_1_1, instagram; ASCII letters in any case): epoch in Unix ms, the time field''s unit in ms and its lowest bit, the node and sequence fields'' lowest bit and width; 22023 for another name';

CREATE FUNCTION snowflake_decode(id bigint, layout text, OUT ts timestamptz, OUT shard integer, OUT seq integer)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
	SELECT CASE WHEN id >= 0
		THEN ROW(snowflake_timestamptz_of_ms(l.epoch_ms + (id >> l.time_shift) * l.unit_ms),
			(id >> l.node_shift & ((1 << l.node_bits) - 1))::integer, (id >> l.seq_shift & ((1 << l.seq_bits) - 1))::integer)
		ELSE snowflake_bad_negative(id, translate(layout, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), NULL::record) END
	FROM snowflake_layout(layout) l;
END;
COMMENT ON FUNCTION snowflake_decode(bigint, text) IS 'time, node and sequence of another system''s 64-bit ID: layout twitter, discord (shard: the 10 bits of datacenter and worker, or worker and process), sonyflake (shard: machine), pgedge, pgedge_1_1 (shard: node; seq: count) or instagram; 22023 for another layout, 22003 for a negative ID';

CREATE FUNCTION snowflake_at(ts timestamptz, layout text) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
	SELECT (snowflake_ms_within(ts, l.epoch_ms, l.epoch_ms + (1::bigint << 63 - l.time_shift) * l.unit_ms - 1,
			translate(layout, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') || ' IDs',
			format('%s to %s ms since 1970', l.epoch_ms, l.epoch_ms + (1::bigint << 63 - l.time_shift) * l.unit_ms - 1))
		- l.epoch_ms) / l.unit_ms << l.time_shift
	FROM snowflake_layout(layout) l;
END;
COMMENT ON FUNCTION snowflake_at(timestamptz, text) IS 'the smallest ID of a layout (twitter, discord, sonyflake, pgedge, pgedge_1_1, instagram) at the time, for key range scans of such IDs; 22023 for another layout, 22008 outside the layout''s range or for an infinite time';

CREATE FUNCTION twitter_decode(id bigint, OUT ts timestamptz, OUT datacenter integer, OUT worker integer, OUT seq integer)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE WHEN id >= 0
	THEN ROW(snowflake_timestamptz_of_ms(1288834974657 + (id >> 22)), (id >> 17 & 31)::integer,
		(id >> 12 & 31)::integer, (id & 4095)::integer)
	ELSE snowflake_bad_negative(id, 'twitter', NULL::record) END;
COMMENT ON FUNCTION twitter_decode(bigint) IS 'the time, datacenter, worker and sequence of a Twitter (X) snowflake ID (41 bits of ms since 1288834974657, 5 + 5 + 12 bits); 22003 for a negative ID';

CREATE FUNCTION discord_decode(id bigint, OUT ts timestamptz, OUT worker integer, OUT process integer, OUT increment integer)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE WHEN id >= 0
	THEN ROW(snowflake_timestamptz_of_ms(1420070400000 + (id >> 22)), (id >> 17 & 31)::integer,
		(id >> 12 & 31)::integer, (id & 4095)::integer)
	ELSE snowflake_bad_negative(id, 'discord', NULL::record) END;
COMMENT ON FUNCTION discord_decode(bigint) IS 'the time, internal worker, internal process and increment of a Discord snowflake (ms since 2015-01-01, 5 + 5 + 12 bits); 22003 for a negative ID';

CREATE FUNCTION sonyflake_decode(id bigint, OUT ts timestamptz, OUT machine integer, OUT seq integer)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE WHEN id >= 0
	THEN ROW(snowflake_timestamptz_of_ms(1409529600000 + (id >> 24) * 10), (id & 65535)::integer,
		(id >> 16 & 255)::integer)
	ELSE snowflake_bad_negative(id, 'sonyflake', NULL::record) END;
COMMENT ON FUNCTION sonyflake_decode(bigint) IS 'the time (10 ms units since 2014-09-01), machine (16 bits) and sequence (8 bits, above the machine) of a Sonyflake ID; 22003 for a negative ID';

-- pgEdge swapped its node and count fields in 1.2: the layout says which release made the IDs
CREATE FUNCTION snowflake_bad_pgedge_layout(layout text, result anyelement) RETURNS anyelement
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
	RAISE EXCEPTION 'pgedge_decode does not read the layout "%"', translate(layout, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
		USING ERRCODE = '22023',
		DETAIL = 'Its layouts are pgedge (pgEdge snowflake 1.2 and later) and pgedge_1_1 (1.0 and 1.1).',
		HINT = 'For other layouts, call snowflake_decode(id, layout).';
END
$$;
COMMENT ON FUNCTION snowflake_bad_pgedge_layout(text, anyelement) IS 'raises 22023 for a known layout that pgedge_decode does not read, as the C extension''s; never returns (result: NULL of the caller''s type)';

CREATE FUNCTION pgedge_decode(id bigint, layout text DEFAULT 'pgedge', OUT ts timestamptz, OUT node integer, OUT count integer)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
	SELECT CASE WHEN translate(layout, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') NOT IN ('pgedge', 'pgedge_1_1')
			THEN snowflake_bad_pgedge_layout(layout, NULL::record)
		WHEN id < 0 THEN snowflake_bad_negative(id, translate(layout, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), NULL::record)
		ELSE ROW(snowflake_timestamptz_of_ms(1672531200000 + (id >> 22)),
			(id >> l.node_shift & 1023)::integer, (id >> l.seq_shift & 4095)::integer) END
	FROM snowflake_layout(layout) l;
END;
COMMENT ON FUNCTION pgedge_decode(bigint, text) IS 'the time, node and count of a pgEdge snowflake ID: layout pgedge (made by pgEdge snowflake 1.2 and later, the default: 41 bits of ms since 2023-01-01, 10 of node, 12 of count) or pgedge_1_1 (1.0 and 1.1, whose count is above the node); 22023 for another layout, 22003 for a negative ID';

-- MongoDB ObjectId: 12 bytes, 24 hex digits: 32 bits of Unix seconds, 5 random bytes, a 3-byte
-- counter

CREATE FUNCTION objectid_timestamp(id bytea) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN length(id) <> 12 THEN snowflake_bad_length(id, 12, 'an ObjectId', NULL::timestamptz)
	ELSE snowflake_timestamptz_of_ms(snowflake_hex_bigint(encode(substr(id, 1, 4), 'hex')) * 1000) END;
COMMENT ON FUNCTION objectid_timestamp(bytea) IS 'the second in a MongoDB ObjectId of 12 bytes; 22P03 for another length';

CREATE FUNCTION objectid_timestamp(id text) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN id !~ '^[0-9a-fA-F]{24}$' THEN snowflake_bad_text('ObjectId', id, NULL::timestamptz)
	ELSE snowflake_timestamptz_of_ms(snowflake_hex_bigint(substr(id, 1, 8)) * 1000) END;
COMMENT ON FUNCTION objectid_timestamp(text) IS 'the second in a MongoDB ObjectId of 24 hex digits (either case); 22P02 otherwise';

CREATE FUNCTION objectid_decode(id bytea, OUT ts timestamptz, OUT random bytea, OUT counter integer)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE WHEN length(id) <> 12 THEN snowflake_bad_length(id, 12, 'an ObjectId', NULL::record)
	ELSE ROW(snowflake_timestamptz_of_ms(snowflake_hex_bigint(encode(substr(id, 1, 4), 'hex')) * 1000), substr(id, 5, 5),
		(get_byte(id, 9) << 16) | (get_byte(id, 10) << 8) | get_byte(id, 11)) END;
COMMENT ON FUNCTION objectid_decode(bytea) IS 'the second, the 5 random bytes and the counter of a MongoDB ObjectId of 12 bytes; 22P03 for another length';

CREATE FUNCTION objectid_decode(id text, OUT ts timestamptz, OUT random bytea, OUT counter integer)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE WHEN id !~ '^[0-9a-fA-F]{24}$' THEN snowflake_bad_text('ObjectId', id, NULL::record)
	ELSE ROW(snowflake_timestamptz_of_ms(snowflake_hex_bigint(substr(id, 1, 8)) * 1000), decode(substr(id, 9, 10), 'hex'),
		snowflake_hex_bigint(substr(id, 19, 6))::integer) END;
COMMENT ON FUNCTION objectid_decode(text) IS 'the second, the 5 random bytes and the counter of a MongoDB ObjectId of 24 hex digits (either case); 22P02 otherwise';

-- TypeID (github.com/jetify-com/typeid, specification 0.3.0): a prefix of at most 63 of a-z
-- and _ (neither first nor last), _, and the uuid's 128 bits after two zero bits as 26
-- characters of Crockford base32 in lower case; an empty prefix leaves out the _ too

CREATE FUNCTION typeid(prefix text, id uuid) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN prefix <> '' AND prefix !~ '^[a-z]([a-z_]{0,61}[a-z])?$' THEN snowflake_bad_text('TypeID prefix', prefix, NULL::text)
	ELSE CASE WHEN prefix = '' THEN '' ELSE prefix || '_' END
		|| snowflake_base32_encode(replace(id::text, '-', ''), 26, '0123456789abcdefghjkmnpqrstvwxyz') END;
COMMENT ON FUNCTION typeid(text, uuid) IS 'the TypeID of a uuid with a type prefix (at most 63 of a-z and _, neither first nor last; empty: the suffix alone): prefix_ and 26 characters of lower-case Crockford base32 (TypeID specification 0.3.0); 22P02 for a bad prefix';

CREATE FUNCTION typeid_uuid(id text) RETURNS uuid
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN id !~ '^([a-z]([a-z_]{0,61}[a-z])?_)?[0-7][0-9a-hjkmnp-tv-z]{25}$' THEN snowflake_bad_text('TypeID', id, NULL::uuid)
	ELSE snowflake_base32_decode(right(id, 26), '0123456789abcdefghjkmnpqrstvwxyz', 32)::uuid END;
COMMENT ON FUNCTION typeid_uuid(text) IS 'the uuid of a TypeID, checked whole against the TypeID specification 0.3.0 (lower case only); 22P02 otherwise, the DETAIL naming the rule broken';

CREATE FUNCTION typeid_prefix(id text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN id !~ '^([a-z]([a-z_]{0,61}[a-z])?_)?[0-7][0-9a-hjkmnp-tv-z]{25}$' THEN snowflake_bad_text('TypeID', id, NULL::text)
	ELSE left(id, -27) END;
COMMENT ON FUNCTION typeid_prefix(text) IS 'the type prefix of a TypeID (empty when it has none), checked whole against the TypeID specification 0.3.0; 22P02 otherwise, the DETAIL naming the rule broken';

-- the 128-bit kinds at a given time, random otherwise (backfills), as the C extension's: the
-- random bits are those of one gen_random_uuid() (core, the server's strong random source; 122
-- random bits around its version and variant digits)

CREATE FUNCTION uuidv7_from_time(ts timestamptz) RETURNS uuid
LANGUAGE sql VOLATILE STRICT PARALLEL SAFE
-- 12 hexadecimal digits of milliseconds, the version 7, then the random UUID's last 19 digits:
-- its 3 random ones after the version 4 (rand_a), its variant 10 and 62 random bits (rand_b)
RETURN (lpad(to_hex(snowflake_unix_ms48(ts)), 12, '0') || '7' || right(replace(gen_random_uuid()::text, '-', ''), 19))::uuid;
COMMENT ON FUNCTION uuidv7_from_time(timestamptz) IS 'a version 7 UUID (RFC 9562) at the millisecond of the time, random otherwise (12 bits of rand_a, 62 of rand_b, from gen_random_uuid()), for backfills; 22008 outside 48 bits of milliseconds (1970 to 10889) or for an infinite time';

CREATE FUNCTION snowflake_uuidv7(shift interval) RETURNS uuid
LANGUAGE sql VOLATILE STRICT PARALLEL SAFE
-- the C extension's snowflake_uuidv7(shift), core's uuidv7(interval) (PostgreSQL 18): the
-- clock's millisecond shifted (months and days counted in the session's time zone, as
-- timestamptz + interval counts them), random below it; no counter, so that a value far
-- ahead cannot hold back snowflake_uuidv7()
RETURN uuidv7_from_time(date_trunc('milliseconds', clock_timestamp()) + shift);
COMMENT ON FUNCTION snowflake_uuidv7(interval) IS 'a version 7 UUID (RFC 9562) at the clock''s millisecond shifted by the interval (as core''s uuidv7(interval), PostgreSQL 18), random otherwise; not ordered with snowflake_uuidv7(); 22008 outside 48 bits of milliseconds (1970 to 10889)';

CREATE FUNCTION ulid_from_time(ts timestamptz) RETURNS uuid
LANGUAGE sql VOLATILE STRICT PARALLEL SAFE
-- 12 hexadecimal digits of milliseconds, then 20 random ones: the random UUID's digits without
-- its version (the 13th) and its variant (the 17th)
RETURN (lpad(to_hex(snowflake_unix_ms48(ts)), 12, '0')
	|| left(regexp_replace(replace(gen_random_uuid()::text, '-', ''), '^(.{12}).(.{3}).', '\1\2'), 20))::uuid;
COMMENT ON FUNCTION ulid_from_time(timestamptz) IS 'a ULID kept as uuid at the millisecond of the time, its 80 other bits random (from the 122 random bits of a gen_random_uuid()), for backfills (github.com/ulid/spec); 22008 outside 48 bits of milliseconds (1970 to 10889) or for an infinite time';
