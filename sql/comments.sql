-- Every object of the extension carries a comment, which \df+, \dT+, \do+ and \dC+ show.

-- what the extension has, by catalog, and how much of it is commented (array types left
-- out: whether ulid[] belongs to the extension depends on the server version; and core's
-- names, which it declares on the versions that lack them: core_names)
SELECT d.classid::regclass AS catalog, count(*) AS objects,
       count(obj_description(d.objid, d.classid::regclass::text)) AS commented
  FROM pg_depend d
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowflake'
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND NOT EXISTS (SELECT FROM pg_type t
                    WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid AND t.typcategory = 'A')
   AND NOT EXISTS (SELECT FROM pg_proc p
                    WHERE d.classid = 'pg_proc'::regclass AND p.oid = d.objid
                      AND p.proname IN ('uuidv7', 'uuid_extract_version', 'uuid_extract_timestamp'))
 GROUP BY 1
 ORDER BY d.classid::regclass::text COLLATE "C";

-- none without
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS uncommented
  FROM pg_depend d
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowflake'
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND obj_description(d.objid, d.classid::regclass::text) IS NULL
 ORDER BY pg_describe_object(d.classid, d.objid, d.objsubid) COLLATE "C";
