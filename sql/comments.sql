-- Every object of the extension carries a comment, which \df+, \dT+, \do+ and \dC+ show.

-- what the extension has, by catalog, and how much of it is commented
SELECT d.classid::regclass AS catalog, count(*) AS objects,
       count(obj_description(d.objid, d.classid::regclass::text)) AS commented
  FROM pg_depend d
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowflake'
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
 GROUP BY 1
 ORDER BY d.classid::regclass::text COLLATE "C";

-- none without
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS uncommented
  FROM pg_depend d
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowflake'
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND obj_description(d.objid, d.classid::regclass::text) IS NULL
 ORDER BY pg_describe_object(d.classid, d.objid, d.objsubid) COLLATE "C";
