import os


class Store:
	def __init__(self, path):
		self.path = path
		self.items = {}

	def load(self):
		if not os.path.exists(self.path):
			return {}
		with open(self.path) as f:
			return parse(f.read())

	def save(self):
		with open(self.path, "w") as f:
			f.write(dump(self.items))

	def clear(self):
		self.items = {}
		return self
