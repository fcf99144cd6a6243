-- A football league of our own (issue 34), for window functions and functional dependencies: per-team series with
-- ties in points and goals, a gap in the rounds, and a column unique in the data (team.code) that no key declares.
CREATE TABLE team (team_id INTEGER PRIMARY KEY, name TEXT NOT NULL, code TEXT NOT NULL, city TEXT NOT NULL, founded INTEGER);
CREATE TABLE player (player_id INTEGER PRIMARY KEY, name TEXT NOT NULL, team_id INTEGER REFERENCES team(team_id), position TEXT NOT NULL, birth DATE NOT NULL, height INTEGER);
CREATE TABLE game (game_id INTEGER PRIMARY KEY, round INTEGER NOT NULL, played DATE NOT NULL, home_id INTEGER REFERENCES team(team_id), away_id INTEGER REFERENCES team(team_id), home_goals INTEGER NOT NULL, away_goals INTEGER NOT NULL);
CREATE TABLE goal (goal_id INTEGER PRIMARY KEY, game_id INTEGER REFERENCES game(game_id), player_id INTEGER REFERENCES player(player_id), minute INTEGER NOT NULL);

INSERT INTO team VALUES (1, 'Rovers', 'ROV', 'Leeds', 1901), (2, 'United', 'UTD', 'York', 1920), (3, 'Athletic', 'ATH', 'Leeds', 1899), (4, 'City', 'CTY', 'Hull', NULL);
INSERT INTO player VALUES
  (1, 'Abe', 1, 'FW', '1998-04-02', 181), (2, 'Ben', 1, 'MF', '2000-01-15', 175), (3, 'Cal', 1, 'DF', '1995-07-30', 188),
  (4, 'Dan', 2, 'FW', '1999-09-09', 179), (5, 'Eli', 2, 'FW', '2001-02-20', 183), (6, 'Fox', 2, 'GK', '1994-12-01', 192),
  (7, 'Gil', 3, 'MF', '1997-05-05', 177), (8, 'Hal', 3, 'FW', '2002-08-08', NULL), (9, 'Ian', 4, 'DF', '1996-03-03', 185), (10, 'Jay', 4, 'FW', '2003-10-10', 174);
INSERT INTO game VALUES
  (1, 1, '2024-08-10', 1, 2, 2, 1), (2, 1, '2024-08-10', 3, 4, 0, 0), (3, 2, '2024-08-17', 2, 3, 3, 3), (4, 2, '2024-08-17', 4, 1, 1, 2),
  (5, 3, '2024-08-24', 1, 3, 1, 1), (6, 3, '2024-08-24', 2, 4, 0, 2), (7, 5, '2024-09-07', 3, 1, 2, 0), (8, 5, '2024-09-07', 4, 2, 1, 1);
INSERT INTO goal VALUES
  (1, 1, 1, 12), (2, 1, 2, 55), (3, 1, 4, 70), (4, 3, 4, 5), (5, 3, 5, 30), (6, 3, 4, 88), (7, 3, 7, 10), (8, 3, 8, 40), (9, 3, 8, 41),
  (10, 4, 10, 20), (11, 4, 1, 33), (12, 4, 1, 80), (13, 5, 1, 15), (14, 5, 7, 60), (15, 6, 10, 44), (16, 6, 9, 71),
  (17, 7, 8, 2), (18, 7, 7, 50), (19, 8, 10, 9), (20, 8, 5, 90);
