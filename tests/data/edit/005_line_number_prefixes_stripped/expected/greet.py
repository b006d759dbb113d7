def greet(name):
    message = "Hello, " + name
    pass
    return message


def main():
    greet("world")
