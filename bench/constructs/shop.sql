-- A shop of our own (issue 34): the rows are chosen so that each construct's other readings give other answers.
-- NULLs where NOT IN and outer joins differ from their naive readings, ties where RANK, DENSE_RANK and
-- ROW_NUMBER differ, a customer with no orders, a category with no products, an unordered id order.
CREATE TABLE category (category_id INTEGER PRIMARY KEY, name TEXT NOT NULL, parent_id INTEGER REFERENCES category(category_id));
CREATE TABLE product (product_id INTEGER PRIMARY KEY, name TEXT NOT NULL, category_id INTEGER REFERENCES category(category_id), price REAL NOT NULL, discontinued INTEGER NOT NULL DEFAULT 0);
CREATE TABLE customer (customer_id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT, segment TEXT, referred_by INTEGER REFERENCES customer(customer_id));
CREATE TABLE store (store_id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL);
CREATE TABLE employee (employee_id INTEGER PRIMARY KEY, name TEXT NOT NULL, store_id INTEGER REFERENCES store(store_id), manager_id INTEGER REFERENCES employee(employee_id), salary INTEGER NOT NULL, hired DATE NOT NULL);
CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customer(customer_id), store_id INTEGER REFERENCES store(store_id), employee_id INTEGER REFERENCES employee(employee_id), ordered DATE NOT NULL, status TEXT NOT NULL);
CREATE TABLE order_item (order_id INTEGER REFERENCES orders(order_id), product_id INTEGER REFERENCES product(product_id), quantity INTEGER NOT NULL, unit_price REAL NOT NULL, PRIMARY KEY (order_id, product_id));
CREATE TABLE refund (refund_id INTEGER PRIMARY KEY, order_id INTEGER REFERENCES orders(order_id), amount REAL NOT NULL, reason TEXT);

INSERT INTO category VALUES (1, 'Toys', NULL), (2, 'Books', NULL), (3, 'Board games', 1), (4, 'Puzzles', 3), (5, 'Garden', NULL), (6, 'Comics', 2);
INSERT INTO product VALUES
  (10, 'Kite', 1, 20.0, 0), (11, 'Yo-yo', 1, 3.0, 0), (12, 'Atlas', 2, 30.0, 0), (13, 'Novel', 2, 12.5, 1),
  (14, 'Chess', 3, 20.0, 0), (15, 'Go', 3, 45.0, 0), (16, 'Jigsaw', 4, 12.5, 0), (17, 'Rubik', 4, 9.0, 0),
  (18, 'Manga', 6, 8.0, 0), (19, 'Doll', 1, 20.0, 1), (20, 'Seeds', 5, 4.0, 0);
INSERT INTO customer VALUES
  (1, 'Ada', 'Lyon', 'retail', NULL), (2, 'Bo', 'Oslo', 'business', 1), (3, 'Cy', 'Lyon', 'retail', 1),
  (4, 'Di', 'Rome', NULL, 2), (5, 'Ed', 'Oslo', 'student', NULL), (6, 'Flo', NULL, 'retail', 3), (7, 'Gus', 'Paris', 'business', NULL);
INSERT INTO store VALUES (1, 'North', 'Oslo'), (2, 'South', 'Rome'), (3, 'East', 'Lyon');
INSERT INTO employee VALUES
  (1, 'Ines', 1, NULL, 5200, '2015-03-01'), (2, 'Jon', 1, 1, 3900, '2018-06-15'), (3, 'Kim', 2, 1, 4100, '2017-01-10'),
  (4, 'Lea', 2, 3, 3900, '2020-09-01'), (5, 'Max', 3, 1, 4600, '2016-11-20'), (6, 'Nia', 3, 5, 3300, '2022-02-01'), (7, 'Oli', 3, 5, 3300, '2021-05-05');
INSERT INTO orders VALUES
  (100, 1, 1, 2, '2024-01-05', 'shipped'), (101, 1, 3, 5, '2024-02-11', 'shipped'), (102, 2, 1, 2, '2024-02-14', 'returned'),
  (103, 3, 3, 6, '2024-03-01', 'shipped'), (104, 3, 3, 7, '2024-03-02', 'open'), (105, 4, 2, 4, '2024-03-15', 'shipped'),
  (106, 2, 2, 3, '2024-04-01', 'shipped'), (107, 5, 1, NULL, '2024-04-20', 'cancelled'), (108, 1, 2, 4, '2024-05-05', 'shipped'),
  (109, 6, 3, 6, '2024-05-06', 'open'), (110, 3, 1, 2, '2024-06-30', 'shipped'), (111, 2, 3, 7, '2024-07-01', 'shipped');
INSERT INTO order_item VALUES
  (100, 10, 2, 12.5), (100, 11, 5, 3.0), (101, 12, 1, 30.0), (101, 14, 1, 20.0), (102, 15, 1, 45.0),
  (103, 16, 3, 12.5), (103, 17, 2, 9.0), (104, 18, 4, 8.0), (105, 10, 1, 12.0), (105, 12, 2, 28.0),
  (106, 14, 2, 20.0), (106, 15, 1, 45.0), (107, 11, 10, 3.0), (108, 13, 1, 12.5), (108, 19, 1, 20.0),
  (109, 17, 1, 9.0), (110, 10, 3, 12.5), (110, 16, 1, 12.5), (111, 15, 2, 40.0), (111, 18, 3, 8.0);
INSERT INTO refund VALUES (1, 102, 45.0, 'damaged'), (2, 105, 12.0, 'late'), (3, NULL, 5.0, 'goodwill'), (4, 111, 40.0, NULL);
