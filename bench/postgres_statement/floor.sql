INSERT INTO loom_statement_bench.floor (body) VALUES (convert_to(repeat('x',100),'UTF8'));
